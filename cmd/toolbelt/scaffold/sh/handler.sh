#!/bin/sh
# One JSON request on stdin; one JSON response on stdout; progress and logs on stderr.
# The request: {"operation":"call","arguments":{"name":"…"},"callId":"…","context":{…}}
set -eu
req=$(cat)
# Extract the name without extra tools: the schema allows only plain strings here.
name=$(printf '%s' "$req" | sed -n 's/.*"name"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p')
echo '{"progress": 50, "message": "greeting"}' >&2
printf '{"success": true, "result": {"greeting": "Hello, %s!"}, "summary": "greeted %s"}\n' "$name" "$name"
