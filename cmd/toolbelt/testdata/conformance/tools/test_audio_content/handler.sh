#!/bin/sh
# test_audio_content: no arguments; answers with an audio block (8 samples of silence, WAV).
set -eu
cat >/dev/null
printf '{"success": true, "content": [{"type": "audio", "data": "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==", "mimeType": "audio/wav"}]}\n'
