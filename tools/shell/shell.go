// Package shell provides the shell tools: exec, which runs a command in the
// workspace, and process, which follows the commands exec left running in
// the background.
//
// Commands run with bash -c, starting in the workspace (a working directory
// outside it is refused), each in a process group of its own that is killed
// as a whole on timeout or cancellation. Their output is kept within a fixed budget however much they
// print, the environment they inherit is stripped of secrets, and calls
// cannot set the variables that decide which programs run. In sandbox mode
// (see package sandbox) commands also run under bubblewrap, with only the
// workspace writable, no network and a process limit.
//
// exec's Preview (for dry runs and for the person asked to confirm a call)
// says exactly what a call would run without running it: the command line,
// the resolved working directory, the variables the call sets, the program
// the command starts as PATH resolves it, and the SHA-256 of the script
// files in the workspace it runs (./deploy.sh, bash x.sh, python3 tool.py,
// source x) — so an approval does not carry over to a changed program or
// script. Its risk is low only for one plain read-only command (ls, cat,
// grep, find without -exec or -delete, git status, … without redirection,
// substitution, expansion or chaining); anything else, and anything that
// cannot be parsed with certainty, is high.
//
// Both tools share a [Manager], which owns the running commands:
//
//	m, err := shell.Register(reg)
//	…
//	defer m.Close() // stops every command still running
package shell

import (
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

var execMeta = tool.Meta{
	ID:                  "exec",
	Label:               "Exec",
	Description:         "Run a shell command in the workspace; long commands continue in the background.",
	Risk:                tool.RiskHigh,
	Destructive:         true,
	OpenWorld:           true,
	ConfirmationMessage: "Run this shell command in the workspace?",
	Capabilities:        tool.Capabilities{Background: true, PTY: true},
	Source:              tool.SourceCore,
}

var processMeta = tool.Meta{
	ID:           "process",
	Label:        "Process",
	Description:  "Follow background commands started by exec: list, poll, log, write input, kill.",
	Risk:         tool.RiskMedium,
	Capabilities: tool.Capabilities{Background: true},
	Source:       tool.SourceCore,
}

// Register adds the exec and process tools to reg as factories that need a
// workspace (the tool context's FSRoot), sharing a new [Manager]. Close the
// manager when the program ends: it stops every command still running.
func Register(reg *registry.Registry) (*Manager, error) {
	m := NewManager()
	if err := reg.RegisterFactory(m.execFactory, execMeta); err != nil {
		return nil, err
	}
	if err := reg.RegisterFactory(m.processFactory, processMeta); err != nil {
		reg.Unregister(execMeta.ID)
		return nil, err
	}
	return m, nil
}
