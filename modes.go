package toolbelt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// openModes sets up the permission modes of the root's runners: those the
// configuration sets, or Options.Mode for every call. Bypass is refused
// where it may not run (see SetMode).
func (tb *Toolbelt) openModes(ctx context.Context) error {
	tb.modes = policy.NewModeSwitch(tb.cfg.Modes())
	if tb.opts.Mode != "" {
		return tb.SetMode(ctx, tb.opts.Mode)
	}
	if tb.modes.Uses(policy.ModeBypass) {
		return tb.bypassPossible(ctx)
	}
	return nil
}

// Mode returns the permission mode the calls of agent ("" for none) run in
// now.
func (tb *Toolbelt) Mode(agent string) policy.Mode { return tb.modes.For(agent) }

// SetMode makes every later call of the root's runners, whichever agent
// makes it, run in mode m. Bypass is refused (the mode stays as it was)
// when Toolbelt runs as root — the tools that do not run in the sandbox
// would run as root — or when the sandbox does not work here, since
// bypass runs commands only in the sandbox.
func (tb *Toolbelt) SetMode(ctx context.Context, m policy.Mode) error {
	if tb.modes == nil {
		return ErrToolsOnly
	}
	if m == policy.ModeBypass {
		if err := tb.bypassPossible(ctx); err != nil {
			return err
		}
	}
	tb.modes.Set(m)
	return nil
}

// Bypassing reports whether any call of the root's runners may run in
// bypass mode now, as configured or set: front doors then say so loudly.
func (tb *Toolbelt) Bypassing() bool {
	return tb.modes != nil && tb.modes.Uses(policy.ModeBypass)
}

// SwitchMode is SetMode done by a person, by ("a user at the terminal",
// a console user): the switch is recorded in the audit log
// (audit.KindModeChanged), from which mode to which.
func (tb *Toolbelt) SwitchMode(ctx context.Context, m policy.Mode, by string) error {
	was := tb.Mode("")
	if err := tb.SetMode(ctx, m); err != nil {
		return err
	}
	return tb.Record(ctx, audit.Record{Kind: audit.KindModeChanged, Time: time.Now(), Mode: string(m), Workspace: tool.ResolveDir(tb.ws),
		Note: fmt.Sprintf("%s switched the permission mode from %s to %s", by, was, m)})
}

// ErrBypassRefused matches the error of choosing bypass mode where it may
// not run.
var ErrBypassRefused = errors.New("bypass mode is refused")

// bypassPossible says why bypass mode may not run here, nil when it may.
func (tb *Toolbelt) bypassPossible(ctx context.Context) error {
	if os.Geteuid() == 0 {
		return fmt.Errorf("%w: toolbelt runs as root, and in bypass mode the tools that do not run in the sandbox (files, web, imported servers) would change things as root without anyone asked. Run toolbelt as an unprivileged user", ErrBypassRefused)
	}
	var c tool.Config
	if tb.base != nil {
		c = tb.base.Config
	}
	if err := shell.SandboxWorks(ctx, c, tool.ResolveDir(tb.ws)); err != nil {
		return fmt.Errorf("%w: it runs commands only in the sandbox, which does not work here: %v", ErrBypassRefused, err)
	}
	return nil
}
