package main

import (
	"io"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// runFlags are the flags of commands that run calls.
type runFlags struct {
	Yes    bool `help:"Approve every call that needs a person's approval (recorded as such in the audit log)."`
	DryRun bool `name:"dry-run" help:"Describe what the calls would change instead of changing it."`
}

// runner returns the pipeline for calls in tc, set up from the config:
// limits, policy, confirmation. Who approves calls: --yes approves all;
// otherwise the person at the terminal is asked, if there is one; otherwise
// nobody, so calls that need approval are blocked. The returned closer
// releases the terminal.
func (e *env) runner(tc *tool.Context, flags runFlags, limits invoke.Config) (*invoke.Runner, io.Closer, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, nil, err
	}
	reg := e.registry()
	if err := policy.Check(cfg, reg); err != nil {
		return nil, nil, err
	}
	l := cfg.Limits
	ic := invoke.Config{
		DefaultTimeout: l.Timeout.D(), MaxTimeout: l.MaxTimeout.D(),
		MaxResultChars: l.MaxResultChars, MaxResultTokens: l.MaxResultTokens, EventMaxChars: l.EventMaxChars,
		UpdateInterval: l.UpdateInterval.D(),
		ConfirmTimeout: cfg.Confirm.Timeout.D(), ConfirmMedium: cfg.Confirm.Medium, ConfirmOnTimeout: cfg.Confirm.OnTimeout,
	}
	ic.Images.MaxSide, ic.Images.MaxBytes = l.ImageMaxSide, l.ImageMaxBytes
	if limits.MaxResultChars > 0 {
		ic.MaxResultChars = limits.MaxResultChars
	}
	opts := []invoke.Option{invoke.WithLogger(e.log), invoke.WithConfig(ic), invoke.WithPolicy(policy.FromConfig(cfg))}
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
	return invoke.New(reg, tc, opts...), closer, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
