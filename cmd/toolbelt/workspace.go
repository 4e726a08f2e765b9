package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolbelt/toolbelt/tool"
)

// workspaceFlags are the flags of commands that run or resolve tools.
type workspaceFlags struct {
	Workspace string `help:"Workspace directory the tools work in." default:"." type:"path"`
}

// toolContext returns the tool context for a person at this terminal: the
// owner, on the "cli" channel, in the workspace.
func (w workspaceFlags) toolContext() (*tool.Context, error) {
	dir, err := filepath.Abs(w.Workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", w.Workspace, err)
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("workspace %q: %w", w.Workspace, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory", w.Workspace)
	}
	return &tool.Context{
		WorkspaceDir: dir,
		FSRoot:       dir,
		Owner:        true,
		Channel:      "cli",
	}, nil
}
