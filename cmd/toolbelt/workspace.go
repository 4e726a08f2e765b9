package main

import (
	"fmt"
	"path/filepath"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
)

// workspaceFlags are the flags of commands that run or resolve tools.
type workspaceFlags struct {
	Workspace string `help:"Workspace directory the tools work in." default:"." type:"path"`
}

// toolContext returns the tool context for a person at this terminal: the
// owner, on the "cli" channel, in the workspace, with a file bridge confined
// to it. When the workspace cannot be used (it is missing or not a
// directory) the context has no bridge, so the tools that need one are
// listed as unavailable, with the reason.
func (w workspaceFlags) toolContext() (*tool.Context, error) {
	tc, _, err := w.open()
	return tc, err
}

// runContext is toolContext for commands that run tools: a workspace that
// cannot be used is an error.
func (w workspaceFlags) runContext() (*tool.Context, error) {
	tc, unusable, err := w.open()
	if err != nil {
		return nil, err
	}
	return tc, unusable
}

// open makes the tool context; unusable says why the workspace has no file
// bridge, and err is set only when there is no context at all.
func (w workspaceFlags) open() (tc *tool.Context, unusable, err error) {
	dir, err := filepath.Abs(w.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace %q: %w", w.Workspace, err)
	}
	tc = &tool.Context{WorkspaceDir: dir, Owner: true, Channel: "cli"}
	b, err := fsbridge.OpenLocal(dir)
	if err != nil {
		return tc, err, nil
	}
	tc.FSRoot, tc.FS = dir, b
	return tc, nil, nil
}
