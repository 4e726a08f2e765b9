package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestAskUserAtTerminal: ask_user puts the model's question to the person
// at the terminal, with its options numbered and the escapes in what the
// model wrote shown, not run; the person's choice (several numbers with
// multiple) or own words come back as the result.
func TestAskUserAtTerminal(t *testing.T) {
	t.Parallel()
	const options = `"options":[{"label":"unit","description":"fast"},{"label":"e2e"},{"label":"fuzz"}]`
	for _, tc := range []struct {
		name, args string
		steps      [][2]string
		want       string
	}{
		{"one option", `{"question":"Which tests?\u001b[2J",` + options + `}`,
			[][2]string{{"A number (empty to decline): ", "4"}, {"A number (empty to decline): ", "2"}}, `The person chose "e2e".`},
		{"several options", `{"question":"Which tests?",` + options + `,"multiple":true}`,
			[][2]string{{"Numbers separated by commas (empty to decline): ", "3, 1"}}, `The person chose "unit", "fuzz".`},
		{"own words", `{"question":"Which tests?",` + options + `,"allowText":true}`,
			[][2]string{{"A number, or your own answer (empty to decline): ", "none today"}}, `The person answered "none today".`},
		{"declined", `{"question":"Which tests?"}`,
			[][2]string{{"Your answer (empty to decline): ", ""}}, "The person declined to answer."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "call", "ask_user", "--args", tc.args)
			cmd.Env = cliEnvironment(t)
			code, screen := atTerminal(t, cmd, tc.steps...)
			if code != 0 || !strings.Contains(screen, tc.want) {
				t.Errorf("exit %d, screen:\n%s", code, screen)
			}
			for _, shown := range []string{"Question from the model:\n  Which tests?"} {
				if !strings.Contains(screen, shown) {
					t.Errorf("the question lacks %q:\n%s", shown, screen)
				}
			}
			if strings.Contains(screen, "\x1b[2J") {
				t.Errorf("an escape the model wrote reached the terminal:\n%q", screen)
			}
			if strings.Contains(tc.args, "options") && !strings.Contains(screen, "  1. unit — fast\n  2. e2e\n  3. fuzz\n") {
				t.Errorf("the options are not numbered:\n%s", screen)
			}
		})
	}
}

// TestAskUserWithoutTerminal: with no terminal (and no MCP client) nobody
// can answer, so ask_user is unavailable and says why.
func TestAskUserWithoutTerminal(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "ask_user", "--args", `{"question":"Go on?"}`)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "nobody can answer questions here") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestAskUserTimeoutChecked: config check accepts tools.ask_user.timeout
// where nobody could answer (that is the context, not the setting), and
// refuses one longer than an hour.
func TestAskUserTimeoutChecked(t *testing.T) {
	t.Parallel()
	runCLI(t, "", "--config", writeConfig(t, "tools:\n  ask_user:\n    timeout: 10m\n"), "config", "check").expect(t, 0)
	r := runCLI(t, "", "--config", writeConfig(t, "tools:\n  ask_user:\n    timeout: 2h\n"), "config", "check").expect(t, 2)
	if !strings.Contains(r.stderr, `tools.ask_user.timeout is "2h"`) {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestAskUserInChat: in toolbelt chat at a terminal, the model's ask_user
// question is put to the person there, who picks an option by its number;
// the model's next request carries the choice as the call's result.
func TestAskUserInChat(t *testing.T) {
	t.Parallel()
	// --yes approves calls; it answers none of the model's questions, so
	// the person at the terminal is still asked.
	for _, flags := range [][]string{nil, {"--yes"}} {
		t.Run(strings.Join(append([]string{"chat"}, flags...), " "), func(t *testing.T) {
			t.Parallel()
			s := llmtest.New(t,
				chat("", llmtest.Call{ID: "q1", Name: "ask_user", Args: `{"question":"Which tests?","options":[{"label":"unit","description":"fast"},{"label":"e2e"}]}`}),
				chat("Running the e2e tests."))
			cmd := exec.Command(os.Args[0], append([]string{"chat", "--model", "openai/x", "--base-url", s.URL + "/v1", "--workspace", t.TempDir()}, flags...)...)
			cmd.Env = cliEnvironment(t)
			code, screen := atTerminal(t, cmd,
				[2]string{"> ", "run the tests"},
				[2]string{"A number (empty to decline): ", "2"},
				[2]string{"> ", "/quit"})
			if code != 0 || !strings.Contains(screen, "Question from the model:\n  Which tests?\n  1. unit — fast\n  2. e2e\n") ||
				!strings.Contains(screen, "Running the e2e tests.") {
				t.Errorf("exit %d, screen:\n%s", code, screen)
			}
			if got := resultOf(t, s, "q1"); !strings.Contains(got, `The person chose "e2e".`) {
				t.Errorf("the model was told %q, screen:\n%s", got, screen)
			}
		})
	}
}
