package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/toolbelt/toolbelt/policy"
)

// writeConfig writes a toolbelt.yaml into a new directory and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	good := writeConfig(t, "tools:\n  profile: coding\n  deny: [test_fail]\n  ask:\n    - tool: write\n      when: {path: [\"**/.env*\"]}\n")
	r := runCLI(t, "", "config", "check", good).expect(t, 0)
	if r.stdout != "Checking "+good+"\n"+good+": ok (profile coding, 1 denied, 1 ask rule)\n" {
		t.Errorf("%q", r.stdout)
	}
	for body, want := range map[string]string{
		"tools:\n  deny: [test_fial]\n":           `:2:10: no tool, alias or group matches "test_fial"; did you mean "test_fail"?`,
		"limits:\n  timeout: forever\n":           `:2:12: limits.timeout is "forever": want a duration such as 30s, 5m or 1h`,
		"tools:\n  exec: {maxTimeout: -5}\n":      ":2:22: tools.exec.maxTimeout is -5: it must not be negative",
		"tools:\n  profile: coding\n  bogus: 1\n": ":3:3: tools.bogus is 1: a tool's settings are a mapping",
		"workspace: .\nextra: true\n":             `:2:1: extra: unknown key`,
		// Every problem, the file's and its tool settings', in file order.
		"confirm: {medium: \"yes\"}\ntools:\n  exec:\n    sandbox: {requird: true}\nlimits: {timout: 5m}\n": `:1:19: confirm.medium is "yes": want true or false
` + "CONFIG" + `:4:15: tools.exec.sandbox.requird: unknown key; did you mean "required"?
` + "CONFIG" + `:5:10: limits.timout: unknown key; did you mean "timeout"?`,
		"tools:\n  exec:\n    sandbox: {required: true, bwrap: /nonexistent/bwrap}\n": ":3:25: tools.exec.sandbox.required is true, but bubblewrap (/nonexistent/bwrap) is not installed",
	} {
		path := writeConfig(t, body)
		want = strings.ReplaceAll(want, "CONFIG", path)
		r := runCLI(t, "", "config", "check", path).expect(t, 2)
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%q: stderr %q, want %q", body, r.stderr, want)
		}
	}
	// A bad configuration stops every command that uses it.
	r = runCLI(t, "", "--config", writeConfig(t, "tools:\n  deny: [nope]\n"), "call", "test_greet", "--args", `{"name":"x"}`).expect(t, 2)
	if !strings.Contains(r.stderr, `no tool, alias or group matches "nope"`) {
		t.Error(r.stderr)
	}
}

// TestPolicyExplainMatchesTheRun checks, case by case, that what policy
// explain says is what happens when the call is made.
func TestPolicyExplainMatchesTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		config, tool, args string
		want               policy.Decision
	}{
		{"tools:\n  deny: [test_greet]\n", "test_greet", `{"name":"a"}`, policy.Deny},
		{"tools:\n  allow: [test_sleep]\n", "test_greet", `{"name":"a"}`, policy.Deny},
		{"tools:\n  allow: [\"test_*\"]\n", "test_greet", `{"name":"a"}`, policy.Allow},
		{"tools:\n  profile: minimal\n", "test_greet", `{"name":"a"}`, policy.Deny},
		{"tools:\n  profile: minimal\n  alsoAllow: [group:messaging]\n", "test_greet", `{"name":"a"}`, policy.Allow},
		{"tools:\n  ask:\n    - tool: test_greet\n      when: {name: \"root*\"}\n", "test_greet", `{"name":"rooted"}`, policy.Ask},
		{"tools:\n  ask:\n    - tool: test_greet\n      when: {name: [\"root*\"]}\n", "test_greet", `{"name":"ada"}`, policy.Allow},
		{"tools:\n  ask: [{tool: test_greet}]\n  deny: [group:messaging]\n", "test_greet", `{"name":"a"}`, policy.Deny},
		{"tools: {}\n", "test_greet", `{"name":"a"}`, policy.Allow},
	} {
		cfg := writeConfig(t, tc.config)
		r := runCLI(t, "", "--config", cfg, "policy", "explain", tc.tool, "--args", tc.args, "--json").expect(t, 0)
		var res policy.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		if res.Decision != tc.want {
			t.Errorf("%q: explain says %v, want %v", tc.config, res.Decision, tc.want)
		}
		// Nobody can approve here (no terminal, no --yes), so an ask blocks too.
		run := runCLI(t, "", "--config", cfg, "call", tc.tool, "--args", tc.args)
		switch tc.want {
		case policy.Allow:
			run.expect(t, 0)
		case policy.Deny:
			run.expect(t, 1)
			if !strings.HasPrefix(run.stderr, "Blocked: ") || !strings.Contains(run.stderr, "not allowed here") {
				t.Errorf("%q: %s", tc.config, run.stderr)
			}
		case policy.Ask:
			run.expect(t, 1)
			if !strings.Contains(run.stderr, `needs a person's approval (requested by policy (global: ask test_greet`) {
				t.Errorf("%q: %s", tc.config, run.stderr)
			}
		}
	}
	r := runCLI(t, "", "--config", writeConfig(t, "tools:\n  deny: [test_greet]\n"), "policy", "explain", "test_greet", "--agent", "bot", "--provider", "openai/gpt-5").expect(t, 0)
	want := "Policy for test_greet (owner, agent bot, provider openai/gpt-5, channel cli)\n  global  deny   deny test_greet\nFinal: deny — Tool test_greet is not allowed here (global: deny test_greet).\n"
	if r.stdout != want {
		t.Errorf("explain:\n%s\nwant:\n%s", r.stdout, want)
	}
}

func TestYesApprovesAndDryRunDescribes(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "test_danger", "--args", `{"target":"build"}`).expect(t, 1)
	if !strings.Contains(r.stderr, "needs a person's approval (high-risk call), but no one is available") {
		t.Errorf("without --yes: %s", r.stderr)
	}
	r = runCLI(t, "", "call", "test_danger", "--args", `{"target":"build"}`, "--yes").expect(t, 0)
	if r.stdout != "deleted build\n" {
		t.Errorf("with --yes: %q", r.stdout)
	}
	r = runCLI(t, "", "call", "test_danger", "--args", `{"target":"build"}`, "--dry-run").expect(t, 0)
	if !strings.HasPrefix(r.stdout, "Dry run of test_danger — nothing was changed.\nIt would delete build.\n  command:     rm -rf build") {
		t.Errorf("dry run: %q", r.stdout)
	}
}

// TestInteractiveConfirmation answers the approval prompt on a real
// pseudo-terminal, as a person would.
func TestInteractiveConfirmation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answers [][2]string // prompt to wait for, line to type
		want    string
		code    int
	}{
		{"allow once", [][2]string{{"[n] no: ", "y"}}, "deleted build", 0},
		{"deny with a reason", [][2]string{{"[n] no: ", "n"}, {"(optional): ", "use make clean instead"}}, "Blocked: The user denied this call: use make clean instead", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "call", "test_danger", "--args", `{"target":"build"}`)
			cmd.Env = cliEnvironment(t)
			code, screen := atTerminal(t, cmd, tc.answers...)
			if code != tc.code || !strings.Contains(screen, tc.want) {
				t.Errorf("exit %d, screen:\n%s", code, screen)
			}
			for _, shown := range []string{"Approval needed: test_danger (high risk)", "why:        high-risk call", "command:    rm -rf build", `arguments:  {"target":"build"}`} {
				if !strings.Contains(screen, shown) {
					t.Errorf("the prompt lacks %q:\n%s", shown, screen)
				}
			}
		})
	}
}

// atTerminal runs cmd at a pseudo-terminal (skipping the test where there
// is none) and answers its prompts by steps (see screen.answer); it returns
// cmd's exit code and all it wrote.
func atTerminal(t *testing.T, cmd *exec.Cmd, steps ...[2]string) (int, string) {
	t.Helper()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	s := newScreen(tty)
	s.answer(t, tty, steps...)
	code := wait(t, cmd)
	return code, s.all(t)
}

// screen collects what a program writes to its terminal.
type screen struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
	ended   chan struct{} // closed when the terminal has nothing more to read
}

func newScreen(tty io.Reader) *screen {
	s := &screen{changed: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		b := make([]byte, 4096)
		for {
			n, err := tty.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			select {
			case s.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// all returns what the program wrote once the terminal has been read to
// its end (after the program exited).
func (s *screen) all(t *testing.T) string {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(30 * time.Second):
		t.Fatalf("the terminal was not read to its end:\n%s", s.text())
	}
	return s.text()
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.ReplaceAll(s.buf.String(), "\r\n", "\n")
}

// answer waits, for each step, until the screen shows the prompt step[0],
// then types the line step[1] into tty.
func (s *screen) answer(t *testing.T, tty io.Writer, steps ...[2]string) {
	t.Helper()
	for _, step := range steps {
		s.waitFor(t, step[0])
		if _, err := tty.Write([]byte(step[1] + "\n")); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor returns once the screen shows want, after everything shown before.
func (s *screen) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.HasSuffix(strings.TrimRight(s.text(), "\n"), strings.TrimRight(want, " ")) && !strings.HasSuffix(s.text(), want) {
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("the screen never showed %q:\n%s", want, s.text())
		}
	}
}

func wait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the CLI did not finish")
		return -1
	}
}

func TestUndo(t *testing.T) {
	t.Parallel()
	ws, data := t.TempDir(), t.TempDir()
	file := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	tb := func(code int, args ...string) cliResult {
		t.Helper()
		return runCLI(t, "", append([]string{"--data", data}, append(args, "--workspace", ws)...)...).expect(t, code)
	}
	read := func() string {
		b, _ := os.ReadFile(file)
		return string(b)
	}
	tb(0, "call", "write", "--id", "w1", "--args", `{"path":"a.txt","content":"bye\n"}`)
	if read() != "bye\n" {
		t.Fatal(read())
	}
	if r := tb(0, "undo", "w1"); r.stdout != "Undid call w1: reverted a.txt.\n" || read() != "hello\n" {
		t.Errorf("%q, file %q", r.stdout, read())
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode())
	}
	if r := tb(1, "undo", "w1"); !strings.Contains(r.stderr, "nothing to undo for call w1") {
		t.Errorf("second undo: %q", r.stderr)
	}
	// A later change: refused, with the difference, and nothing touched.
	tb(0, "call", "edit", "--id", "e1", "--args", `{"path":"a.txt","edits":[{"oldText":"hello","newText":"HELLO"}]}`)
	if err := os.WriteFile(file, []byte("HELLO\nadded later\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	r := tb(1, "undo", "e1")
	if !strings.Contains(r.stderr, "cannot undo call e1: 1 file changed since the call") || !strings.Contains(r.stderr, "+added later") || read() != "HELLO\nadded later\n" {
		t.Errorf("conflict: %q, file %q", r.stderr, read())
	}
	// A created file is deleted; the audit log lists the calls.
	tb(0, "call", "write", "--id", "n1", "--args", `{"path":"new.txt","content":"x\n"}`)
	if r := tb(0, "undo", "n1"); r.stdout != "Undid call n1: deleted new.txt.\n" {
		t.Errorf("%q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("created file still there: %v", err)
	}
	if r := runCLI(t, "", "--data", data, "audit").expect(t, 0); !strings.Contains(r.stdout, "w1") || !strings.Contains(r.stdout, "n1") {
		t.Errorf("audit: %s", r.stdout)
	}
}
