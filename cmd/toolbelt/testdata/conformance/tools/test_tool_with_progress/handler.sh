#!/bin/sh
# test_tool_with_progress: no arguments; reports progress at 0, 50 and 100
# percent on standard error, a second apart, then answers.
set -eu
cat >/dev/null
for p in 0 50 100; do
  [ "$p" = 0 ] || sleep 1 # past the pipeline's update interval, so none is coalesced
  printf '{"progress": %s, "message": "step at %s%%"}\n' "$p" "$p" >&2
done
printf '{"success": true, "summary": "Progress test completed."}\n'
