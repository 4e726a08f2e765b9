package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/policy"
)

// modeFlags is the flag of the commands that run calls in a permission
// mode (run, chat, call, serve, mcp).
type modeFlags struct {
	Mode string `help:"Run the calls in this permission mode: default, acceptEdits, plan, dontAsk or bypass (default: mode in toolbelt.yaml). See docs/governance.md." placeholder:"MODE"`
}

// modeOption returns the permission mode the --mode flag names, "" when it
// names none.
func (e *env) modeOption() (policy.Mode, error) {
	if e.mode == "" {
		return "", nil
	}
	m, err := policy.ParseMode(e.mode)
	if err != nil {
		return "", fmt.Errorf("--mode: %w", err)
	}
	return m, nil
}

// bypassBanner is what stderr says, loudly, whenever calls may run in
// bypass mode.
const bypassBanner = `
!!! BYPASS MODE: every call runs without asking anyone. Commands run only in the
!!! sandbox, but file changes, web requests and imported tools are not asked about.
`

// warnBypass prints the bypass banner when calls of tb may run in bypass
// mode.
func (e *env) warnBypass(tb *toolbelt.Toolbelt) {
	if tb.Bypassing() {
		fmt.Fprint(e.stderr, colorsFor(e.stderr).red(bypassBanner))
	}
}

// printMode says, in serve's banner, which permission mode calls run in:
// in bypass mode, loudly.
func (e *env) printMode(col colors) {
	m := e.tb.Mode("")
	if e.tb.Bypassing() {
		fmt.Fprintf(e.stdout, "  mode       %s\n", col.red("BYPASS: every call runs without asking anyone (commands only in the sandbox)"))
		return
	}
	fmt.Fprintf(e.stdout, "  mode       %s\n", m)
}

// switchMode is chat's /mode: without a name, it shows the mode the
// calls of agent run in and the modes there are; with one, every later
// call runs in that mode (recorded in the audit log).
func (e *env) switchMode(agent, arg string) {
	name := strings.TrimSpace(arg)
	if name == "" {
		cur := e.tb.Mode(agent)
		for _, m := range policy.Modes {
			mark := " "
			if m == cur {
				mark = "*"
			}
			fmt.Fprintf(e.stdout, "%s %-12s %s\n", mark, m, m.Description())
		}
		return
	}
	m, err := policy.ParseMode(name)
	if err == nil {
		err = e.tb.SwitchMode(context.Background(), m, "a user at the terminal (chat /mode)")
	}
	if err != nil {
		printError(e.stderr, err)
		return
	}
	fmt.Fprintf(e.stderr, "mode: %s (%s)\n", m, m.Description())
	e.warnBypass(e.tb)
}
