package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// rootKind is what a command needs of the composition root.
type rootKind int

const (
	// toolsRoot is the tools alone, to list and describe them
	// (toolbelt.Options.ToolsOnly).
	toolsRoot rootKind = iota + 1
	// stateRoot is the store and the audit log alone, to read state,
	// record in the log and undo (toolbelt.Options.StateOnly).
	stateRoot
	// pipelineRoot is the whole governed pipeline.
	pipelineRoot
)

// serving is what a command that serves, or runs an agent, asks the root
// to do beside opening; the zero value is a command that ends at once.
type serving struct {
	// workJobs works the async tools' jobs (serve, mcp, run, chat).
	workJobs bool
	// schedules runs due schedules, and tools watches the directory
	// tools' folders (serve, mcp).
	schedules, tools bool
	// early returns from opening before the imported servers answered
	// (toolbelt.Options.ServeEarly).
	early bool
	// storeAfter opens the store once it is closed, or something uses it
	// (a server's first answers need no state).
	storeAfter <-chan struct{}
}

// root returns the run's composition root, opening it on first use, for
// the workspace ws ("" for a state root run from anywhere), with what
// kind names and e.serving asks. A run opens one root: a pipeline root
// serves the commands that need less, too.
func (e *env) root(kind rootKind, ws string) (*toolbelt.Toolbelt, error) {
	if e.tb != nil {
		if e.tbKind != kind && e.tbKind != pipelineRoot {
			return nil, fmt.Errorf("toolbelt: a command needs two kinds of root (%d, then %d)", e.tbKind, kind)
		}
		return e.tb, nil
	}
	o, err := e.stateOptions(os.Getenv)
	if err != nil {
		return nil, err
	}
	if kind != toolsRoot {
		if o.AuditKey, err = e.auditKey(os.Getenv); err != nil {
			return nil, err
		}
	}
	if o.TokenKey, err = tokenKey(os.Getenv); err != nil {
		return nil, err
	}
	o.Config.Jobs.WebhookSecret = cmp.Or(os.Getenv(envWebhookSecret), o.Config.Jobs.WebhookSecret)
	o.Workspace, o.ToolsOnly, o.StateOnly = ws, kind == toolsRoot, kind == stateRoot
	if o.Mode, err = e.modeOption(); err != nil {
		return nil, err
	}
	o.Builtins, o.Logger, o.Version = e.tools, e.log, buildVersion()
	o.WrapBridge, o.Deliver = e.wrapBridge, e.deliver(ws)
	sv := e.serving
	o.WorkJobs, o.RunSchedules, o.WatchTools, o.ServeEarly, o.StoreAfter = sv.workJobs, sv.schedules, sv.tools, sv.early, sv.storeAfter
	if e.systemFile != "" {
		o.Protect = []string{e.systemFile}
	}
	o.Waiting = func(what string) func() { return e.startSpinner(what + "…").Stop }
	if kind != toolsRoot {
		if database, from, by := e.overridden(os.Getenv); database != "" {
			dsn, _, _ := o.Location()
			e.log.Warn(fmt.Sprintf("%s overrides %s: state is kept in SQLite in %s, not in %s", by, from, dsn, database))
		}
	}
	tb, err := toolbelt.Open(context.Background(), o)
	if ddir := (*toolbelt.DataDirError)(nil); errors.As(err, &ddir) {
		return nil, fmt.Errorf("%w: keep state elsewhere (--data DIR or %s), or work in another directory", ddir, envData)
	}
	if oerr := (*toolbelt.OpenError)(nil); errors.As(err, &oerr) {
		return nil, oerr.Err // a person knows what the command opens: the cause is the news
	}
	if err != nil {
		return nil, err
	}
	e.tb, e.tbKind = tb, kind
	e.warnBypass(tb)
	if kind != stateRoot && !o.Config.Tools.DirsSet {
		e.noteWorkspaceTools(ws)
	}
	return tb, nil
}

// closeRoot closes the run's root, if one was opened: calls in flight and
// the steps of jobs get the shutdown grace.
func (e *env) closeRoot() {
	if e.tb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := e.tb.Close(ctx); err != nil {
		e.log.Warn("closing", "err", err)
	}
}

// registry returns the tools of the run's root, opening a tools root for
// the --workspace flag's workspace when none is open.
func (e *env) registry() (*registry.Registry, error) {
	if e.tb != nil {
		return e.tb.Registry(), nil
	}
	_, tb, err := workspaceFlags{Workspace: e.workspace}.root(e, toolsRoot)
	if err != nil {
		return nil, err
	}
	return tb.Registry(), nil
}

// runner returns the pipeline for calls in tc (a context of the run's
// pipeline root), with the config's settings but for what override sets.
// Who approves calls: --yes approves all; otherwise the person at the
// terminal is asked, if there is one (who also answers the model's
// questions, --yes or not); otherwise the console (calls wait
// for its decision when one is open, and are blocked when none is), and
// stderr says where each call waits. The returned closer releases the runner and the
// terminal.
func (e *env) runner(tc *tool.Context, flags runFlags, override invoke.Config, extra ...invoke.Option) (*invoke.Runner, io.Closer, error) {
	tb, err := e.root(pipelineRoot, tc.Workspace)
	if err != nil {
		return nil, nil, err
	}
	ic := toolbelt.PipelineConfig(tb.Config())
	if override.MaxResultChars > 0 {
		ic.MaxResultChars = override.MaxResultChars
	}
	ic.Loop = override.Loop
	opts := []invoke.Option{invoke.WithConfig(ic)}
	var term io.Closer
	t, atTerminal := openTerminal()
	if atTerminal {
		t.lines = e.lines
		// The model's questions (ask_user) go to the person at the
		// terminal, --yes or not: it approves calls, it answers no question.
		ask.AskerService.Set(tc, t)
		// So do the forms tools ask for (package interact).
		interact.Service.Set(tc, tb.ToolRequests(t))
		term = t
	}
	switch {
	case flags.Yes:
		opts = append(opts, invoke.WithConfirmer(invoke.AutoApprove))
	case atTerminal:
		opts = append(opts, invoke.WithConfirmer(t))
	default:
		term = e.showWaiting(tb.Feed())
	}
	r, err := tb.RunnerFor(tc, append(opts, extra...)...)
	if err != nil {
		if term != nil {
			term.Close()
		}
		return nil, nil, err
	}
	return r, releaser{r, term}, nil
}

// terminalOf is the terminal a runner's closer (from env.runner) asks at,
// or nil when it asks nobody there.
func terminalOf(closer io.Closer) *terminal {
	if r, ok := closer.(releaser); ok {
		t, _ := r.term.(*terminal)
		return t
	}
	return nil
}

// showWaiting prints on stderr, until it is closed, the console page each
// call of the feed's waits on for approval.
func (e *env) showWaiting(f *feed.Hub) io.Closer {
	sub := f.Subscribe(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.Events() {
			if ev.Kind == feed.Waiting {
				fmt.Fprintf(e.stderr, "toolbelt: waiting for approval in the console: %s\n", ev.URL)
			}
		}
	}()
	return closerFunc(func() error {
		sub.Close()
		<-done
		return nil
	})
}

// closerFunc is an io.Closer made of a function.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// releaser releases a runner and the terminal it asks at (nil when none).
type releaser struct {
	r    *invoke.Runner
	term io.Closer
}

func (x releaser) Close() error {
	x.r.Close()
	if x.term == nil {
		return nil
	}
	return x.term.Close()
}
