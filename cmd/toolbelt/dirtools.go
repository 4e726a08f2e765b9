package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/dir"
)

// loadDirTools registers the directory tools of the config's folders in
// reg. A broken or refused tool is reported on stderr, with why, and
// skipped (config check lists them too).
func (e *env) loadDirTools(reg *registry.Registry, cfg *config.Config) {
	sources, opts := e.dirTools(cfg)
	e.dirs = dir.NewLoader(reg, sources, opts, func(p dir.Problem) {
		e.log.Warn("skipped a directory tool", "dir", p.Dir, "err", p.Err)
	})
	e.dirProblems = e.dirs.Load()
	if !cfg.Tools.DirsSet {
		e.noteWorkspaceTools()
	}
}

// noteWorkspaceTools says so when the workspace has a tools folder of
// directory tools that is not loaded: the default would include it, but the
// agent can write it, so it is loaded only when tools.dirs lists it.
func (e *env) noteWorkspaceTools() {
	ws, err := workspaceFlags{Workspace: e.workspace}.dir(e)
	if err != nil || ws == "" {
		return
	}
	folder := filepath.Join(ws, "tools")
	if e.trying != "" && realpath.Within(e.trying, folder) {
		return // the tool tried is loaded on purpose
	}
	entries, err := os.ReadDir(folder)
	if err != nil {
		return
	}
	for _, en := range entries {
		if _, err := os.Stat(filepath.Join(folder, en.Name(), dir.MetadataFile)); en.IsDir() && err == nil {
			e.log.Warn("the workspace's tools folder holds directory tools that were not loaded: the agent can write it, so it is loaded only when toolbelt.yaml lists it (tools: {dirs: [./tools]}; its tools are then untrusted: they run contained unless a person approves a call)", "dir", folder)
			return
		}
	}
}

// dirOf returns the folder of the directory tool id ("" for another
// tool) and, for an untrusted one, why the agent could have written it.
func (e *env) dirOf(id string) (folder, untrusted string) {
	if e.dirs == nil {
		return "", ""
	}
	t, ok := e.dirs.Tool(id)
	if !ok {
		return "", ""
	}
	return t.Dir, t.Untrusted
}

// watchDirTools keeps the directory tools in step with their folders until
// the run ends: a server picks up added, changed and removed tools, and
// tells its MCP clients.
func (e *env) watchDirTools() {
	if e.toolsNow(); e.dirs == nil || e.watchingDirs {
		return
	}
	e.watchingDirs = true
	if err := e.dirs.Start(context.Background()); err != nil {
		e.log.Warn("watching the directory tools' folders", "err", err)
	}
}

// dirTools returns the folders of directory tools and how their tools
// are loaded (toolbelt.DirTools) for the run's workspace; when it cannot
// be told, the agent could write anywhere ("/"), and only folders
// declared trusted are.
func (e *env) dirTools(cfg *config.Config) ([]dir.Source, dir.Options) {
	ws, err := workspaceFlags{Workspace: e.workspace}.dir(e)
	if err != nil {
		ws = string(filepath.Separator)
	}
	return toolbelt.DirTools(cfg, ws)
}

// toolCmd groups the commands that make and check directory tools.
type toolCmd struct {
	New   toolNewCmd   `cmd:"" help:"Write a working directory tool (metadata.json, schema.json, a handler and a test) to start from."`
	Check toolCheckCmd `cmd:"" help:"Check a directory tool's folder: metadata, schema, handler."`
	Try   toolTryCmd   `cmd:"" help:"Run a directory tool once through the pipeline."`
}

type toolCheckCmd struct {
	Dir string `arg:"" help:"The tool's folder." type:"path"`
}

func (c *toolCheckCmd) Run(e *env) error {
	t, err := dir.Load(c.Dir, dir.Options{Trusted: true})
	if err != nil {
		return err
	}
	m := t.Meta
	fmt.Fprintf(e.stdout, "%s is a valid directory tool.\n", t.Dir)
	// The metadata may be a model's: its text is shown with escapes visible.
	fmt.Fprintf(e.stdout, "  name     %s\n  handler  %s\n  risk     %s\n  section  %s\n", termsafe.Line(m.ID), termsafe.Line(strings.Join(t.Argv, " ")), m.Risk, termsafe.Line(m.Section))
	if m.Timeout > 0 {
		fmt.Fprintf(e.stdout, "  timeout  %s\n", m.Timeout)
	}
	if md := t.Metadata; md.Async {
		fmt.Fprintf(e.stdout, "  async    %s\n", asyncLine(md))
	}
	if m.RequiresConfirmation || m.Risk.String() == "high" {
		fmt.Fprintf(e.stdout, "  confirm  %s\n", termsafe.Line(cmp.Or(m.ConfirmationMessage, "(asks before every call)")))
	}
	return nil
}

// asyncLine says how an async tool's work is followed.
func asyncLine(md dir.Metadata) string {
	if md.AsyncType == "webhook" {
		return "webhook at " + md.WebhookPath
	}
	return fmt.Sprintf("polling every %gs", cmp.Or(md.PollingInterval, tool.DefaultPollingInterval.Seconds()))
}

type toolTryCmd struct {
	Dir  string `arg:"" help:"The tool's folder." type:"path"`
	Args string `help:"Arguments as a JSON object (default: {})." placeholder:"JSON"`
	JSON bool   `name:"json" help:"Print the result message as JSON."`
	workspaceFlags
	runFlags
}

func (c *toolTryCmd) Run(e *env) error {
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	// The person who names a folder here runs it as theirs: trusted.
	t, err := dir.Load(abs, dir.Options{Trusted: true})
	if err != nil {
		return err
	}
	e.trying = abs
	reg := e.registry()
	if m, ok := reg.Meta(t.Meta.ID); ok {
		if m.Source != "directory" {
			return fmt.Errorf("%s: the name %q is taken by a %s tool: rename the directory tool", t.Dir, t.Meta.ID, m.Source)
		}
		reg.Unregister(t.Meta.ID) // the folder being tried replaces a loaded copy
	}
	if err := reg.Register(t.Tool()); err != nil {
		return err
	}
	if e.dirs != nil {
		e.dirs.Adopt(t)
	}
	call := callCmd{Tool: t.Meta.ID, Args: cmp.Or(c.Args, "{}"), JSON: c.JSON, workspaceFlags: c.workspaceFlags, runFlags: c.runFlags}
	return call.Run(e)
}

// errNoLang is the error for an unknown --lang.
var errNoLang = errors.New("--lang must be go, python, node or sh")
