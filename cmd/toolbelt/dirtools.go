package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/dir"
)

// noteWorkspaceTools says so when the workspace has a tools folder of
// directory tools that is not loaded: the default would include it, but the
// agent can write it, so it is loaded only when tools.dirs lists it.
func (e *env) noteWorkspaceTools(ws string) {
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
	if e.tb == nil {
		return "", ""
	}
	t, ok := e.tb.DirTool(id)
	if !ok {
		return "", ""
	}
	return t.Dir, t.Untrusted
}

// toolCmd groups the commands that make and check directory tools.
type toolCmd struct {
	New   toolNewCmd   `cmd:"" help:"Write a working directory tool (metadata.json, schema.json, a handler and a test) to start from."`
	Check toolCheckCmd `cmd:"" help:"Check a directory tool's folder: metadata, schema, handler."`
	Try   toolTryCmd   `cmd:"" help:"Run a directory tool once through the pipeline."`
}

type toolCheckCmd struct {
	Dir  string `arg:"" help:"The tool's folder." type:"path"`
	JSON bool   `name:"json" help:"Print what was checked as JSON."`
}

// checkedTool is what toolbelt tool check tells of a valid directory tool;
// the fields that do not apply are empty.
type checkedTool struct {
	Dir     string   `json:"dir"`
	Name    string   `json:"name"`
	Handler []string `json:"handler"`
	Risk    string   `json:"risk"`
	Section string   `json:"section"`
	Timeout string   `json:"timeout,omitempty"`
	Async   string   `json:"async,omitempty"`
	Confirm string   `json:"confirm,omitempty"`
}

func (c *toolCheckCmd) Run(e *env) error {
	t, err := dir.Load(c.Dir, dir.Options{Trusted: true})
	if err != nil {
		return err
	}
	m := t.Meta
	ct := checkedTool{Dir: t.Dir, Name: m.ID, Handler: t.Argv, Risk: m.Risk.String(), Section: m.Section}
	if m.Timeout > 0 {
		ct.Timeout = m.Timeout.String()
	}
	if md := t.Metadata; md.Async {
		ct.Async = asyncLine(md)
	}
	if m.RequiresConfirmation || m.Risk.String() == "high" {
		ct.Confirm = cmp.Or(m.ConfirmationMessage, "(asks before every call)")
	}
	if c.JSON {
		return writeJSON(e.stdout, ct)
	}
	fmt.Fprintf(e.stdout, "%s is a valid directory tool.\n", ct.Dir)
	// The metadata may be a model's: its text is shown with escapes visible.
	fmt.Fprintf(e.stdout, "  name     %s\n  handler  %s\n  risk     %s\n  section  %s\n", termsafe.Line(ct.Name), termsafe.Line(strings.Join(ct.Handler, " ")), ct.Risk, termsafe.Line(ct.Section))
	for _, f := range []struct{ label, value string }{{"timeout", ct.Timeout}, {"async", ct.Async}, {"confirm", ct.Confirm}} {
		if f.value != "" {
			fmt.Fprintf(e.stdout, "  %-7s  %s\n", f.label, termsafe.Line(f.value))
		}
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
	cfg, err := e.config()
	if err != nil {
		return err
	}
	// The person who names a folder here runs it as theirs: trusted.
	t, err := dir.Load(abs, dir.Options{Trusted: true, Settings: tool.Config(cfg.Tools.Settings)})
	if err != nil {
		return err
	}
	e.trying = abs
	_, tb, err := c.root(e, pipelineRoot)
	if err != nil {
		return err
	}
	// The folder being tried replaces a loaded copy.
	if err := tb.Adopt(t); err != nil {
		return err
	}
	call := callCmd{Tool: t.Meta.ID, Args: cmp.Or(c.Args, "{}"), JSON: c.JSON, workspaceFlags: c.workspaceFlags, runFlags: c.runFlags}
	return call.Run(e)
}

// errNoLang is the error for an unknown --lang.
var errNoLang = errors.New("--lang must be go, python, node or sh")
