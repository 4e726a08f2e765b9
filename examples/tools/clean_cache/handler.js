// clean_cache: deletes the files under <workspace>/.cache (or one sub-folder),
// never following symbolic links out of it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

function fail(error, suggestion) {
  process.stdout.write(JSON.stringify({ success: false, error, canRetry: false, suggestion }) + "\n");
}

function sizeAndRemove(dir) {
  let files = 0, bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    const st = fs.lstatSync(p);
    if (st.isDirectory()) {
      const sub = sizeAndRemove(p);
      files += sub.files; bytes += sub.bytes;
      fs.rmdirSync(p);
    } else {
      files++; bytes += st.size; // a symbolic link is removed, never followed
      fs.unlinkSync(p);
    }
  }
  return { files, bytes };
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  const ws = request.context && request.context.workspace;
  if (!ws) return fail("this call has no workspace", "Run it with a workspace.");
  let target = path.join(ws, ".cache");
  if (request.arguments.subdir) target = path.join(target, request.arguments.subdir);
  let st;
  try { st = fs.lstatSync(target); } catch {
    return fail(`there is no ${path.relative(ws, target)} folder in the workspace`, "Nothing to clean; check the name.");
  }
  if (!st.isDirectory()) return fail(`${path.relative(ws, target)} is not a folder`, "Give a folder under .cache.");
  process.stderr.write(JSON.stringify({ progress: 20, message: "deleting" }) + "\n");
  const { files, bytes } = sizeAndRemove(target);
  const rel = path.relative(ws, target);
  process.stdout.write(JSON.stringify({
    success: true,
    result: { folder: rel, filesDeleted: files, bytesFreed: bytes },
    summary: `deleted ${files} files (${bytes} bytes) from ${rel}`,
  }) + "\n");
});
