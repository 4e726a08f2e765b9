package main

import (
	"context"
	"io"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// runFlags are the flags of commands that run calls.
type runFlags struct {
	Yes    bool `help:"Approve every call that needs a person's approval (recorded as such in the audit log)."`
	DryRun bool `name:"dry-run" help:"Describe what the calls would change instead of changing it."`
}

// pipeline returns the options every pipeline of this run gets from the
// config: limits, confirmation settings and policy (checked against the
// registry first), and the state it keeps in the store — full outputs, the
// undo journal (set on tc), the audit log. A field of override that is set
// wins over the config.
func (e *env) pipeline(tc *tool.Context, override invoke.Config) ([]invoke.Option, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	st, err := e.state(tc.WorkspaceDir)
	if err != nil {
		return nil, err
	}
	r := cfg.Retention
	tc.Journal = st.Journal(store.JournalOptions{MaxAge: r.Undo.D()})
	if err := policy.Check(cfg, e.registry()); err != nil {
		return nil, err
	}
	l := cfg.Limits
	ic := invoke.Config{
		DefaultTimeout: l.Timeout.D(), MaxTimeout: l.MaxTimeout.D(),
		MaxResultChars: l.MaxResultChars, MaxResultTokens: l.MaxResultTokens, EventMaxChars: l.EventMaxChars,
		UpdateInterval: l.UpdateInterval.D(),
		ConfirmTimeout: cfg.Confirm.Timeout.D(), ConfirmMedium: cfg.Confirm.Medium, ConfirmOnTimeout: cfg.Confirm.OnTimeout,
	}
	ic.Images.MaxSide, ic.Images.MaxBytes = l.ImageMaxSide, l.ImageMaxBytes
	if override.MaxResultChars > 0 {
		ic.MaxResultChars = override.MaxResultChars
	}
	opts := []invoke.Option{
		invoke.WithLogger(e.log), invoke.WithConfig(ic), invoke.WithPolicy(policy.FromConfig(cfg)),
		invoke.WithOutputs(st.Outputs(store.OutputOptions{MaxAge: r.Outputs.D(), MaxBytes: r.OutputsBytes})),
		invoke.WithAudit(e.auditWriter(st)),
		invoke.WithApprovalStore(st.Approvals(tc.WorkspaceDir)),
	}
	if h := e.hooksOption(cfg); h != nil {
		opts = append(opts, h)
	}
	return opts, nil
}

// auditWriter returns the run's background audit writer, started once;
// what it has queued is written when the run ends.
func (e *env) auditWriter(st *store.Store) *audit.Writer {
	if e.audit == nil {
		e.audit = audit.New(st).Writer(func(err error) { e.log.Error("writing the audit log", "err", err) })
	}
	return e.audit
}

// state opens the run's store once; it is closed when the run ends. The data
// directory must not be inside the workspace.
func (e *env) state(workspace string) (*store.Store, error) {
	if e.st == nil {
		st, err := e.openStore(context.Background(), workspace)
		if err != nil {
			return nil, err
		}
		e.st = st
	}
	return e.st, nil
}

// runner returns the pipeline for calls in tc, as the config sets it up. Who
// approves calls: --yes approves all; otherwise the person at the terminal
// is asked, if there is one; otherwise nobody, so calls that need approval
// are blocked. The returned closer releases the terminal.
func (e *env) runner(tc *tool.Context, flags runFlags, override invoke.Config) (*invoke.Runner, io.Closer, error) {
	opts, err := e.pipeline(tc, override)
	if err != nil {
		return nil, nil, err
	}
	var closer io.Closer = nopCloser{}
	switch {
	case flags.Yes:
		opts = append(opts, invoke.WithConfirmer(invoke.AutoApprove))
	default:
		if t, ok := openTerminal(); ok {
			opts = append(opts, invoke.WithConfirmer(t))
			closer = t
		}
	}
	return invoke.New(e.registry(), tc, opts...), closer, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
