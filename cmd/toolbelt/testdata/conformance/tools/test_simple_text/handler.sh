#!/bin/sh
# test_simple_text: no arguments; answers with a line of text.
set -eu
cat >/dev/null
printf '{"success": true, "summary": "This is a simple text response for testing."}\n'
