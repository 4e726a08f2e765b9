#!/usr/bin/env bash
# Schema compile per corpus: Toolbelt's compiler against OpenClaw's
# tool-schema normalizer, interleaved, on the corpus (testdata/mcp-tools and
# schema/testdata/corpus).
#
#   bench/schema.sh [runs] [rounds] [BIN…]
#
# BIN… are builds of ./bench/schema to measure side by side (each named by
# its file name, each interleaved with the others and OpenClaw), for a
# before/after; without them, ./bench/schema is built from the checkout.
#
# Needs Go, Node and npm. OpenClaw's normalizer comes from the npm package
# @openclaw/ai (unpacked with `npm pack`; its tool-schema module has no
# dependencies of its own). Prints per dialect the median over runs of each
# side's wall time per corpus (median of rounds) and CPU time per corpus
# (mean over rounds, all threads, GC included), and OpenClaw ÷ each build.
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
builds=("${@:3}")
if ((${#builds[@]} == 0)); then
	go build -o "$work/toolbelt" ./bench/schema
	builds=("$work/toolbelt")
fi
dialects=(gemini openai-strict xai anthropic openai)
for ((i = 0; i < runs; i++)); do
	for b in "${builds[@]}"; do
		"$b" -name "$(basename "$b")" -corpus "$corpus" -rounds "$rounds" "${dialects[@]}"
	done
	node bench/schema/openclaw.mjs "$module" "$corpus" "$rounds" "${dialects[@]}"
done >"$work/lines"
python3 - "$work/lines" "$version" <<'PY'
import collections, json, statistics, sys
d = collections.defaultdict(list)
impls = []
for line in open(sys.argv[1]):
    j = json.loads(line)
    d[(j["dialect"], j["impl"])].append(j)
    if j["impl"] != "openclaw" and j["impl"] not in impls:
        impls.append(j["impl"])
tools = next(iter(d.values()))[0]["tools"]
print(f"schema compile, {tools} tools per corpus, OpenClaw @openclaw/ai {sys.argv[2]}; medians over runs")
print("| dialect | OpenClaw wall | OpenClaw CPU |" + "".join(f" {i} wall | {i} CPU | OpenClaw ÷ {i} (wall; CPU) |" for i in impls))
print("| --- | --- | --- |" + " --- | --- | --- |" * len(impls))
for dialect in ["gemini", "openai-strict", "xai", "anthropic", "openai"]:
    o = d[(dialect, "openclaw")]
    ow = statistics.median(x["wall_ms"] for x in o); oc = statistics.median(x["cpu_ms"] for x in o)
    row = f"| {dialect} | {ow:.2f} ms | {oc:.2f} ms |"
    for i in impls:
        t = d[(dialect, i)]
        tw = statistics.median(x["wall_ms"] for x in t); tc = statistics.median(x["cpu_ms"] for x in t)
        row += f" {tw:.2f} ms | {tc:.2f} ms | {ow/tw:.2f}×; {oc/tc:.2f}× |"
    print(row)
PY
