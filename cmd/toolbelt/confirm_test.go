package main

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestTerminalStatesEachScope: the terminal's question offers once, this
// session and this workspace, says what the last two cover and that the
// workspace's is kept until revoked, and answers with that grant; when only
// once is offered, the question has no other choice, says why, and an "s"
// is not taken for one.
func TestTerminalStatesEachScope(t *testing.T) {
	t.Parallel()
	const (
		covers   = "this command, while the workspace's files stay as they are now"
		question = "Allow? [y] once, [s] this session, [w] this workspace (kept until revoked), [n] no: "
	)
	for _, tc := range []struct {
		name             string
		always, noAlways string
		rule             string
		// steps are what to wait for on the screen, and then type.
		steps [][2]string
		want  invoke.Answer
		shows string
	}{
		{name: "session", always: covers, steps: [][2]string{{question, "s"}},
			want:  invoke.Answer{Allow: true, Grant: invoke.GrantSession, By: "tester"},
			shows: "  remember:   [s] and [w] cover " + covers + "\n"},
		{name: "workspace", always: covers, steps: [][2]string{{question, "w"}},
			want: invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: "tester"}},
		{name: "once", always: covers, steps: [][2]string{{question, "y"}},
			want: invoke.Answer{Allow: true, By: "tester"}},
		{name: "rule", always: covers, rule: "exec(make:*)",
			steps: [][2]string{{"Allow? [y] once, [s] this session, [r] save the rule, [w] this workspace (kept until revoked), [n] no: ", "r"}},
			want:  invoke.Answer{Allow: true, Grant: invoke.GrantRule, By: "tester"},
			shows: "  rule:       [r] saves allow exec(make:*) for this workspace: the calls it matches run unasked until revoked\n"},
		{name: "no rule proposed", always: covers, steps: [][2]string{{question, "r"}, {"Please answer y, s, w or n.\n" + question, "y"}},
			want: invoke.Answer{Allow: true, By: "tester"}},
		{name: "not offered", noAlways: "the workspace has more than 200000 files, too many to fingerprint",
			steps: [][2]string{{"Allow? [y] once, [n] no: ", "s"}, {"Please answer y or n.\nAllow? [y] once, [n] no: ", "y"}},
			want:  invoke.Answer{Allow: true, By: "tester"},
			shows: "  remember:   only once is offered: the workspace has more than 200000 files, too many to fingerprint\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer ptmx.Close()
			defer tty.Close()
			term := &terminal{tty: tty, in: bufio.NewReader(tty), who: "tester"}
			s := newScreen(ptmx)
			done := make(chan invoke.Answer, 1)
			go func() {
				a, err := term.Confirm(context.Background(), invoke.Confirmation{Tool: "exec", Risk: tool.RiskHigh, Reason: "high-risk call",
					Effects: &tool.Effects{Command: "make"}, Always: tc.always, NoAlways: tc.noAlways, Rule: tc.rule})
				if err != nil {
					t.Error(err)
				}
				done <- a
			}()
			s.answer(t, ptmx, tc.steps...)
			if got := <-done; got != tc.want {
				t.Errorf("answer %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(s.text(), tc.shows) {
				t.Errorf("the terminal does not show %q:\n%s", tc.shows, s.text())
			}
		})
	}
}
