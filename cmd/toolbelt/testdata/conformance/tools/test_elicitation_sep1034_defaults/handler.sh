#!/bin/sh
# test_elicitation_sep1034_defaults: asks the person for a form whose fields
# all have defaults (SEP-1034), and answers with their reply.
set -eu
read -r request
printf '%s\n' '{"elicit": {"message": "Please review and update the form fields with defaults", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "description": "User name", "default": "John Doe"}, "age": {"type": "integer", "description": "User age", "default": 30}, "score": {"type": "number", "description": "User score", "default": 95.5}, "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"}, "verified": {"type": "boolean", "description": "Verification status", "default": true}}}}}' >&2
read -r answer
case $answer in
'{"error"'*) printf '{"success": false, "error": "no answer", "result": %s}\n' "$answer" ;;
*) printf '{"success": true, "summary": "Elicitation completed", "result": %s}\n' "$answer" ;;
esac
