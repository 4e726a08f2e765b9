// Times `read` of a 4 KB file over stdio with the TypeScript MCP SDK's
// client (@modelcontextprotocol/sdk, installed by bench/tsclient.sh), against
// each server given, all started at once and called in alternating blocks.
// Usage: node client.mjs SDK_DIR CALLS SERVERS_JSON
// SERVERS_JSON: [{"name": "...", "command": "...", "args": [...], "env": {...}}]
// Prints one JSON line per server: p50 and p99 in ms.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, callsArg, serversArg] = process.argv.slice(2);
const esm = join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(pathToFileURL(join(esm, "client/index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(esm, "client/stdio.js")).href);
const calls = Number(callsArg);
const servers = JSON.parse(serversArg);
const sessions = [];
for (const s of servers) {
  const client = new Client({ name: "tsclient-bench", version: "1" });
  const transport = new StdioClientTransport({ command: s.command, args: s.args, env: { ...process.env, ...s.env }, stderr: "ignore" });
  await client.connect(transport);
  await client.listTools();
  sessions.push({ name: s.name, client, lat: [] });
}
const call = (c) => c.callTool({ name: "read", arguments: { path: "file.txt" } });
for (const s of sessions) for (let i = 0; i < 100; i++) await call(s.client); // warm up
const block = 100;
for (let done = 0; done < calls; done += block) {
  for (const s of sessions) {
    for (let i = 0; i < block; i++) {
      const t = process.hrtime.bigint();
      const r = await call(s.client);
      s.lat.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (r.isError || !JSON.stringify(r.content).includes("xxxx")) {
        console.error(`${s.name}: unexpected result ${JSON.stringify(r).slice(0, 300)}`);
        process.exit(1);
      }
    }
  }
}
const q = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
for (const s of sessions) {
  console.log(JSON.stringify({ server: s.name, calls: s.lat.length, p50_ms: q(s.lat, 0.5), p99_ms: q(s.lat, 0.99) }));
  await s.client.close();
}
