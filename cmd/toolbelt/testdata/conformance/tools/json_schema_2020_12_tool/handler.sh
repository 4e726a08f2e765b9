#!/bin/sh
# json_schema_2020_12_tool: answers with the arguments it was given.
set -eu
printf '{"success": true, "summary": "received"}\n'
cat >/dev/null
