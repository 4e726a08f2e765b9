#!/bin/sh
# test_embedded_resource: no arguments; answers with an embedded text resource.
set -eu
cat >/dev/null
printf '{"success": true, "content": [{"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}]}\n'
