#!/bin/sh
# test_tool_with_logging: no arguments; writes three log lines on standard error, which reach the client as notifications/message, then answers.
set -eu
cat >/dev/null
for m in "Tool execution started" "Tool processing data" "Tool execution completed"; do
  printf '{"log": "%s", "level": "info"}\n' "$m" >&2
  sleep 0.05
done
printf '{"success": true, "summary": "Tool with logging executed successfully."}\n'
