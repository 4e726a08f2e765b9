#!/bin/sh
# test_elicitation_sep1330_enums: asks the person for a form with the five
# kinds of enum field (SEP-1330), and answers with their reply.
set -eu
read -r request
printf '%s\n' '{"elicit": {"message": "Please choose among the options", "requestedSchema": {"type": "object", "properties": {"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]}, "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]}, "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]}, "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}}, "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}}}}}' >&2
read -r answer
case $answer in
'{"error"'*) printf '{"success": false, "error": "no answer", "result": %s}\n' "$answer" ;;
*) printf '{"success": true, "summary": "Elicitation completed", "result": %s}\n' "$answer" ;;
esac
