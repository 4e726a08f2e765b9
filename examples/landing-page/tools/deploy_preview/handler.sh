#!/bin/sh
# The page tools are one Go program, ../../pagetools, built by go run (and
# cached) in this checkout's module; it answers this tool's calls, one per line.
cd "$TOOLBELT_TOOL_DIR/../../pagetools" && exec go run . deploy_preview
