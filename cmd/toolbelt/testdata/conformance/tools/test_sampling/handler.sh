#!/bin/sh
# test_sampling: asks the caller's side for a completion of the prompt
# argument (an interactive handler: the request on standard error, the
# answer on standard input) and answers with it.
set -eu
read -r request
# The prompt as it stands in the request: a JSON string's body, escapes kept.
prompt=$(printf '%s\n' "$request" | sed -n 's/.*"prompt" *: *"\(\([^"\\]\|\\.\)*\)".*/\1/p')
printf '{"sample": {"messages": [{"role": "user", "text": "%s"}], "maxTokens": 100}}\n' "$prompt" >&2
read -r answer
case $answer in
'{"error"'*) printf '{"success": false, "error": "no completion", "result": %s}\n' "$answer" ;;
*) printf '{"success": true, "summary": "LLM response", "result": %s}\n' "$answer" ;;
esac
