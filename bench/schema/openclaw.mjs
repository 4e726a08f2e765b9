// Times OpenClaw's tool-schema normalizer (@openclaw/ai, installed by
// bench/schema.sh) on the same corpus and rounds as main.go, printing the
// same JSON lines. Usage: node openclaw.mjs TOOL_SCHEMA_MODULE CORPUS_DIRS ROUNDS DIALECT...
// (CORPUS_DIRS comma-separated)
//
// Each dialect maps to the call OpenClaw makes for that provider:
//   gemini        normalizeToolParameterSchema(s, {modelProvider: "google"})
//   openai-strict normalizeOpenAIStrictToolParameters(s, true)
//   openai        normalizeOpenAIStrictCompatSchema(normalizeToolParameterSchema(s, {modelProvider: "openai"}))
//   anthropic     normalizeToolParameterSchema(s, {modelProvider: "anthropic"})
//   xai           normalizeToolParameterSchema(s, {modelProvider: "xai", modelCompat: xAI's patch})
// OpenClaw caches results per schema object, so every round gets fresh
// copies of the schemas, made before the clock starts.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modPath, dirs, roundsArg, ...dialects] = process.argv.slice(2);
const ts = await import(pathToFileURL(modPath).href);
const rounds = Number(roundsArg);
const docs = [];
for (const dir of dirs.split(",")) {
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    for (const t of JSON.parse(readFileSync(join(dir, f), "utf8")).tools) docs.push(t.inputSchema);
  }
}
const xai = { toolSchemaProfile: "xai", unsupportedToolSchemaKeywords: ["minContains", "maxContains"] };
const calls = {
  gemini: (s) => ts.normalizeToolParameterSchema(s, { modelProvider: "google" }),
  "openai-strict": (s) => ts.normalizeOpenAIStrictToolParameters(s, true),
  openai: (s) => ts.normalizeOpenAIStrictCompatSchema(ts.normalizeToolParameterSchema(s, { modelProvider: "openai" })),
  anthropic: (s) => ts.normalizeToolParameterSchema(s, { modelProvider: "anthropic" }),
  xai: (s) => ts.normalizeToolParameterSchema(s, { modelProvider: "xai", modelCompat: xai }),
};
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
for (const d of dialects) {
  const call = calls[d];
  if (!call) {
    console.error(`openclaw bench: no OpenClaw call for dialect ${d}`);
    process.exit(2);
  }
  for (let i = 0; i < 20; i++) for (const s of structuredClone(docs)) call(s); // warm up the JIT
  const copies = Array.from({ length: rounds }, () => structuredClone(docs));
  const walls = [];
  const c = process.cpuUsage();
  for (const copy of copies) {
    const w = process.hrtime.bigint();
    for (const s of copy) call(s);
    walls.push(Number(process.hrtime.bigint() - w) / 1e6);
  }
  const cu = process.cpuUsage(c);
  const cpu = (cu.user + cu.system) / 1e3 / rounds;
  console.log(JSON.stringify({ impl: "openclaw", dialect: d, tools: docs.length, wall_ms: median(walls), cpu_ms: cpu }));
}
