#!/bin/sh
# sys_info: no arguments; answers with facts about the machine.
set -eu
cat >/dev/null # the request; this tool needs nothing from it
kernel=$(uname -sr)
arch=$(uname -m)
host=$(uname -n)
up=$(cut -d' ' -f1 /proc/uptime 2>/dev/null | cut -d. -f1 || echo 0)
printf '{"success": true, "summary": "%s on %s, up %ss", "result": {"kernel": "%s", "arch": "%s", "hostname": "%s", "uptimeSeconds": %s}}\n' \
  "$kernel" "$arch" "${up:-0}" "$kernel" "$arch" "$host" "${up:-0}"
