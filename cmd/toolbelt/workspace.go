package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// workspaceFlags are the flags of commands that run or resolve tools.
type workspaceFlags struct {
	Workspace string `help:"Workspace directory the tools work in (default: TOOLBELT_WORKSPACE, the config's workspace, else the current directory unless it is / or your home folder)." placeholder:"DIR"`
}

// stateOf returns the workspace directory (see dir) and the store of its
// state.
func (w workspaceFlags) stateOf(e *env) (string, *store.Store, error) {
	ws, tb, err := w.root(e, stateRoot)
	if err != nil {
		return "", nil, err
	}
	return ws, tb.Store(), nil
}

// root returns the workspace directory (see dir) and the run's root of
// kind, opened for it when none is open yet.
func (w workspaceFlags) root(e *env, kind rootKind) (string, *toolbelt.Toolbelt, error) {
	ws, err := w.dir(e)
	if err != nil {
		return "", nil, err
	}
	tb, err := e.root(kind, ws)
	return ws, tb, err
}

// dir returns the workspace directory: the flag, TOOLBELT_WORKSPACE, the
// config's workspace (relative to the config file), or the current directory
// — unless that is one nobody means to hand the tools (unchosen).
func (w workspaceFlags) dir(e *env) (string, error) {
	dir := cmp.Or(w.Workspace, os.Getenv("TOOLBELT_WORKSPACE"))
	if dir == "" {
		cfg, err := e.config()
		if err != nil {
			return "", err
		}
		dir = configPath(cfg, cfg.Workspace)
	}
	abs, err := filepath.Abs(cmp.Or(dir, "."))
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	if dir == "" {
		home, _ := os.UserHomeDir()
		if why := unchosen(abs, home); why != "" {
			return "", fmt.Errorf("the current directory %s is %s: it is not taken for the workspace, which is what the tools can read and change. "+
				"Choose one: cd into a project folder, or pass --workspace DIR, or set TOOLBELT_WORKSPACE, or workspace: in toolbelt.yaml", abs, why)
		}
	}
	return abs, nil
}

// unchosen says why the current directory dir is no workspace to fall into
// ("" when it is one): it is the file system's root, the home folder home
// ("" when unknown), or a folder above it.
func unchosen(dir, home string) string {
	switch {
	case filepath.Dir(dir) == dir:
		return "the root of the file system"
	case home == "":
		return ""
	case realpath.Resolve(dir) == realpath.Resolve(home):
		return "your home folder"
	case realpath.Within(home, dir):
		return "above your home folder"
	}
	return ""
}

// configPath resolves a path written in the config (config.Config.Resolve).
func configPath(cfg *config.Config, p string) string { return cfg.Resolve(p) }

// toolContext returns the tool context for a person at this terminal, as a
// pipeline hands it to tools: the owner, on the "cli" channel, in the
// workspace, with a file bridge confined to it, the tools' settings from the
// config and the services of the root's store (opened only if a tool uses
// it). When the workspace cannot be used (it is missing or not a
// directory) the context has no bridge, so the tools that need one are
// listed as unavailable, with the reason.
func (w workspaceFlags) toolContext(e *env) (*tool.Context, error) {
	tc, err := w.open(e, toolsRoot)
	if err != nil {
		return nil, err
	}
	return invoke.New(e.tb.Registry(), tc).Context(), nil
}

// runContext is toolContext for commands that run tools, in the run's
// pipeline root: a workspace that cannot be used is an error.
func (w workspaceFlags) runContext(e *env) (*tool.Context, error) {
	return w.open(e, pipelineRoot)
}

// open makes the tool context of the person at this terminal in a root of
// kind.
func (w workspaceFlags) open(e *env, kind rootKind) (*tool.Context, error) {
	dir, tb, err := w.root(e, kind)
	if err != nil {
		return nil, err
	}
	return tb.Context(tool.Identity{Workspace: dir, Owner: true, Channel: "cli"})
}
