package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
)

// writeHTML writes one file of the page into the workspace.
func writeHTML(_ context.Context, s *site, raw json.RawMessage) (response, error) {
	var args struct{ Filename, Content string }
	if err := json.Unmarshal(raw, &args); err != nil {
		return response{}, err
	}
	name := path.Clean(args.Filename)
	if dir := path.Dir(name); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return response{}, fmt.Errorf("%s: %w", args.Filename, err)
		}
	}
	if err := s.root.WriteFile(name, []byte(args.Content), 0o644); err != nil {
		return response{}, fmt.Errorf("%s: %w (the file must lie in the workspace)", args.Filename, err)
	}
	return response{
		Result:  map[string]any{"success": true, "path": name, "size": len(args.Content)},
		Summary: fmt.Sprintf("wrote %s (%d bytes)", name, len(args.Content)),
	}, nil
}
