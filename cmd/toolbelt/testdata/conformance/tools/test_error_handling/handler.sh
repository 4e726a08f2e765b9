#!/bin/sh
# test_error_handling: no arguments; always fails.
set -eu
cat >/dev/null
printf '{"success": false, "error": "This tool intentionally returns an error for testing"}\n'
