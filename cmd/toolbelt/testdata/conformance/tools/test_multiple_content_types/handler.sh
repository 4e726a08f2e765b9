#!/bin/sh
# test_multiple_content_types: no arguments; answers with a text, an image and a resource block.
set -eu
cat >/dev/null
printf '{"success": true, "content": [{"type": "text", "text": "Multiple content types test:"}, {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", "mimeType": "image/png"}, {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\\"test\\": \\"data\\", \\"value\\": 123}"}}]}\n'
