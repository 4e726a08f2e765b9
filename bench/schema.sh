#!/usr/bin/env bash
# Schema compile per corpus: Toolbelt's compiler against OpenClaw's
# tool-schema normalizer, interleaved, on the corpus (testdata/mcp-tools and
# schema/testdata/corpus).
#
#   bench/schema.sh [runs] [rounds]
#
# Needs Go, Node and npm. OpenClaw's normalizer comes from the npm package
# @openclaw/ai (unpacked with `npm pack`; its tool-schema module has no
# dependencies of its own). Prints per dialect the median over runs of each
# side's wall time per corpus (median of rounds) and CPU time per corpus
# (mean over rounds, all threads, GC included), and OpenClaw ÷ Toolbelt.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
rounds=${2:-100}
corpus=testdata/mcp-tools,schema/testdata/corpus
version=2026.9.6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@openclaw/ai@$version" >/dev/null && tar xzf openclaw-ai-*.tgz)
module="$work/package/dist/internal/tool-schema.mjs"
go build -o "$work/schemabench" ./bench/schema
dialects=(gemini openai-strict xai anthropic openai)
for ((i = 0; i < runs; i++)); do
	"$work/schemabench" -corpus "$corpus" -rounds "$rounds" "${dialects[@]}"
	node bench/schema/openclaw.mjs "$module" "$corpus" "$rounds" "${dialects[@]}"
done >"$work/lines"
python3 - "$work/lines" "$version" <<'PY'
import collections, json, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    j = json.loads(line)
    d[(j["dialect"], j["impl"])].append(j)
tools = next(iter(d.values()))[0]["tools"]
print(f"schema compile, {tools} tools per corpus, OpenClaw @openclaw/ai {sys.argv[2]}")
print("| dialect | Toolbelt wall | OpenClaw wall | OpenClaw ÷ Toolbelt (wall) | Toolbelt CPU | OpenClaw CPU | OpenClaw ÷ Toolbelt (CPU) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for dialect in ["gemini", "openai-strict", "xai", "anthropic", "openai"]:
    t, o = d[(dialect, "toolbelt")], d[(dialect, "openclaw")]
    tw = statistics.median(x["wall_ms"] for x in t); ow = statistics.median(x["wall_ms"] for x in o)
    tc = statistics.median(x["cpu_ms"] for x in t); oc = statistics.median(x["cpu_ms"] for x in o)
    print(f"| {dialect} | {tw:.2f} ms | {ow:.2f} ms | {ow/tw:.2f}× | {tc:.2f} ms | {oc:.2f} ms | {oc/tc:.2f}× |")
PY
