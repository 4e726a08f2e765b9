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
// the resolved working directory, the variables the call sets, every
// program the command line starts (pipelines, lists, subshells,
// substitutions, wrapped programs) with its resolved path — or a plain
// statement that the list cannot be complete — and the SHA-256 of the
// script files in the workspace it runs, so an approval does not carry over
// to a changed program or script.
//
// Its risk is low — the call runs without a person's approval — only when
// every program is on an allowlist, every option on that program's own
// list, and every file it reads, after glob expansion and through
// recursion, stays inside the workspace without crossing a link (see
// allow.go and analyze.go); for git, also when the repository configures no
// program. Such a command then runs contained under bubblewrap (workspace
// read-only, no network, a minimal read-only view of the system) when that
// works, else on the host with a rebuilt environment; a call the pipeline
// let through unasked is checked again before it runs. A time limit set by
// the call's caller is the limit of the command: it is never left running
// in the background past it. Background commands belong to the session that
// started them.
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
	Settings:            &Config{},
}

var processMeta = tool.Meta{
	ID:           "process",
	Label:        "Process",
	Description:  "Follow background commands started by exec: list, poll, log, write input, kill.",
	Risk:         tool.RiskMedium,
	Capabilities: tool.Capabilities{Background: true},
	Source:       tool.SourceCore,
	Settings:     &Config{},
	SettingsKey:  ConfigKey,
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
