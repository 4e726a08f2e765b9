#!/bin/sh
# test_image_content: no arguments; answers with an image block (a 1x1 red PNG).
set -eu
cat >/dev/null
printf '{"success": true, "content": [{"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", "mimeType": "image/png"}]}\n'
