#!/usr/bin/env bash
# stdio `read` of a 4 KB file with the TypeScript MCP SDK's client, Toolbelt
# (`toolbelt mcp`, the durable audit on, as configured by default) against the
# floor (bench/floor), both up at once, called in alternating blocks of 100.
#
#   bench/tsclient.sh [calls] [toolbelt binary]
#
# Needs Go, Node and npm (the client, @modelcontextprotocol/sdk, is
# installed into a temporary directory). Prints p50 and p99 per server and
# the ratios Toolbelt ÷ floor.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-2000}
sdk_version=1.32.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && echo '{"private":true}' >package.json && npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$sdk_version" >/dev/null)
go build -o "$work/floor" ./bench/floor
tb=${2:-}
if [[ -z $tb ]]; then
	go build -o "$work/toolbelt" ./cmd/toolbelt
	tb=$work/toolbelt
fi
ws=$work/workspace
mkdir -p "$ws"
for _ in $(seq 64); do printf '%063d\n' 0 | tr 0 x; done >"$ws/file.txt"
echo '{}' >"$work/plain.yaml"
servers=$(python3 - "$tb" "$work" "$ws" <<'PY'
import json, sys
tb, work, ws = sys.argv[1:]
print(json.dumps([
    {"name": "toolbelt", "command": tb, "args": ["mcp", "--workspace", ws],
     "env": {"TOOLBELT_CONFIG": f"{work}/plain.yaml", "TOOLBELT_DATA": f"{work}/data", "XDG_CONFIG_HOME": f"{work}/config"}},
    {"name": "floor", "command": f"{work}/floor", "args": ["-dir", ws], "env": {}},
]))
PY
)
node bench/tsclient/client.mjs "$work" "$calls" "$servers" | python3 -c '
import json, sys
r = {j["server"]: j for j in map(json.loads, sys.stdin)}
t, f = r["toolbelt"], r["floor"]
n = t["calls"]
print(f"stdio read 4 KB, TypeScript SDK client, {n} calls each")
print("| figure | Toolbelt | floor | Toolbelt ÷ floor |")
print("| --- | --- | --- | --- |")
for k, name in (("p50_ms", "p50"), ("p99_ms", "p99")):
    print(f"| {name} | {t[k]:.3f} ms | {f[k]:.3f} ms | {t[k]/f[k]:.2f}× |")
'
