#!/bin/sh
# Runs the handler with a request and checks its answer: sh test.sh
set -eu
cd "$(dirname "$0")"
out=$(echo '{"operation":"call","arguments":{"name":"Ada"},"callId":"t1","context":{}}' | sh handler.sh 2>/dev/null)
case "$out" in
*'"success": true'*'Hello, Ada!'*) echo "ok" ;;
*) echo "unexpected answer: $out" >&2; exit 1 ;;
esac
