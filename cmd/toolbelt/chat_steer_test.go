package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestChatSteersAtTerminal: in toolbelt chat at a terminal, a line typed
// while the model's exec runs steers the turn: the command is stopped, its
// result says it was interrupted, and the model's next request carries the
// line after it. A command typed meanwhile runs at the prompt, once the
// turn ends.
func TestChatSteersAtTerminal(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t,
		chat("", llmtest.Call{ID: "x1", Name: "exec", Args: `{"command":"touch started && sleep 60"}`}),
		chat("Stopped; hello."))
	ws := t.TempDir()
	cmd := exec.Command(os.Args[0], "chat", "--model", "openai/x", "--base-url", s.URL+"/v1", "--workspace", ws, "--yes")
	cmd.Env = cliEnvironment(t)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	screen := newScreen(tty)
	typeWhen := func(want, line string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for !strings.Contains(screen.text(), want) {
			select {
			case <-screen.changed:
			case <-deadline:
				t.Fatalf("the screen never showed %q:\n%s", want, screen.text())
			}
		}
		if _, err := tty.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	typeWhen("> ", "wait a minute")
	typeWhen("→ exec", "/tools")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break // the command runs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exec never started:\n%s", screen.text())
		}
	}
	typeWhen("waits for the prompt", "never mind, just say hello")
	typeWhen("Stopped; hello.", "/quit")
	if code := wait(t, cmd); code != 0 {
		t.Errorf("exit %d:\n%s", code, screen.all(t))
	}
	// The /tools typed during the turn ran at the prompt, after it.
	if all := screen.all(t); !regexp.MustCompile(`(?s)Stopped; hello\..*\nexec +`).MatchString(all) {
		t.Errorf("/tools did not run once the turn ended:\n%s", all)
	}
	got := resultOf(t, s, "x1")
	if !strings.Contains(got, agent.ErrSteered.Error()) {
		t.Errorf("the exec's result does not say it was interrupted: %q", got)
	}
	if reqs := s.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "never mind, just say hello") || strings.Contains(string(reqs[1].Body), `/tools`) {
		t.Errorf("the second request does not carry the steering line (and only it): %d requests", len(reqs))
	}
}
