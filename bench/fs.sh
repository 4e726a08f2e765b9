#!/usr/bin/env bash
# Benchmarks of the file tools beside ripgrep, run through the call pipeline:
#   grep over a large tree (default: the Go module cache; set
#   TOOLBELT_BENCH_GREP_TREE to choose another), find over 50,000 generated
#   files, and paged reads of a 10 MB file.
# Prints the medians of COUNT runs (default 5) with the toolbelt/rg ratio and
# writes them, with the raw output, to bench/fs.md.
#
#   bench/fs.sh                 # COUNT=5 BENCHTIME=10x
#   COUNT=3 bench/fs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rg >/dev/null; then
  echo "ripgrep (rg) is needed for the comparison: apt-get install -y ripgrep" >&2
  exit 1
fi
count=${COUNT:-5}
benchtime=${BENCHTIME:-10x}
tree=${TOOLBELT_BENCH_GREP_TREE:-$(go env GOMODCACHE)}
export TOOLBELT_BENCH_GREP_TREE=$tree

# One benchmark run at a time, so that each rg measurement is taken right
# after the toolbelt one it is compared with, under the same load.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/fs.test" ./tools/fs
raw=""
for i in $(seq "$count"); do
  run=$(cd tools/fs && "$work/fs.test" -test.run '^$' -test.bench 'GrepTree|Find50k|Read10MB' -test.benchtime "$benchtime")
  echo "$run"
  raw+="$run"$'\n'
done

# median NAME: the median ns/op of benchmark NAME over the runs.
median() {
  echo "$raw" | awk -v n="$1" '$1 ~ "^Benchmark"n"(-[0-9]+)?$" {print $3}' | sort -n |
    awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'
}
ms() { awk -v ns="$1" 'BEGIN {printf "%.1f ms", ns/1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f×", a/b}'; }

files=$(find "$tree" -type f | wc -l)
size=$(du -sh "$tree" | cut -f1)
table="| benchmark | toolbelt | rg | toolbelt / rg |
| --- | --- | --- | --- |"
for b in GrepTree Find50k; do
  t=$(median "$b/toolbelt")
  r=$(median "$b/rg")
  table+="
| $b | $(ms "$t") | $(ms "$r") | $(ratio "$t" "$r") |"
done
for b in first-page middle-page; do
  t=$(median "Read10MB/$b")
  table+="
| Read10MB/$b | $(ms "$t") | — | — |"
done

report="# File tools benchmarks

Measured by \`bench/fs.sh\` on $(date -u +%Y-%m-%d): medians of $count interleaved runs of $benchtime each,
on $(nproc) CPUs ($(go env GOOS)/$(go env GOARCH), $(go version | awk '{print $3}'), $(rg --version | sed -n 1p)).
Each toolbelt number is one call through the pipeline (\`invoke.Runner.Run\`); each rg number
is one \`rg\` process on the same tree with the same rules (hidden files searched, \`.gitignore\`
honoured outside git repositories too).

- **GrepTree**: \`grep\` for \`func NewReader\\(\` over $tree ($files files, $size).
- **Find50k**: \`find\` for \`*.go\` (5,000 matches) among 50,000 files in 500 directories;
  rg: \`rg --files -g '*.go'\`. Both produce all 5,000 paths (\`matches\`: for find, the
  paths the tool listed, from its result's details). The pipeline then cuts the text a model
  sees to its output budget, keeping the whole list retrievable: \`lines-to-model\` counts the
  paths left in that text. The times compare the same work, 5,000 paths each.
- **Read10MB**: \`read\` of a 10 MB log: the first page, and the page at line 100,000 (both count
  every line of the file for the notice).

$table

<details><summary>Raw output</summary>

\`\`\`
$raw
\`\`\`
</details>
"
# The whole-process comparison (go run ./bench/fs) keeps its section.
keep=$(sed -n '/^## Whole processes/,$p' bench/fs.md 2>/dev/null || true)
echo "$report" > bench/fs.md
if [ -n "$keep" ]; then printf '\n%s\n' "$keep" >> bench/fs.md; fi
echo
echo "$table"
echo "(written to bench/fs.md)"
