#!/bin/sh
# test_elicitation: asks the person for a username and an email, with the
# message argument (an interactive handler: the request on standard error,
# the answer on standard input), and answers with what they said.
set -eu
read -r request
message=$(printf '%s\n' "$request" | sed -n 's/.*"message" *: *"\(\([^"\\]\|\\.\)*\)".*/\1/p')
printf '{"elicit": {"message": "%s", "requestedSchema": {"type": "object", "properties": {"username": {"type": "string", "description": "User'"'"'s response"}, "email": {"type": "string", "description": "User'"'"'s email address"}}, "required": ["username", "email"]}}}\n' "$message" >&2
read -r answer
case $answer in
'{"error"'*) printf '{"success": false, "error": "no answer", "result": %s}\n' "$answer" ;;
*) printf '{"success": true, "summary": "User response", "result": %s}\n' "$answer" ;;
esac
