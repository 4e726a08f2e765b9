// One JSON request on stdin; one JSON response on stdout; progress and logs on stderr.
"use strict";

function handle(args, context) {
  return { success: true, result: { greeting: `Hello, ${args.name}!` }, summary: `greeted ${args.name}` };
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  process.stderr.write(JSON.stringify({ progress: 50, message: "greeting" }) + "\n");
  let response;
  try {
    response = handle(request.arguments, request.context || {});
  } catch (e) {
    response = { success: false, error: String(e.message || e), canRetry: false, suggestion: "Check the arguments." };
  }
  process.stdout.write(JSON.stringify(response) + "\n");
});
