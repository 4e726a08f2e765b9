package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestSpinnerOnlyOnATerminal: a long call shows a spinner on stderr when it
// is a terminal, and stdout carries only the result.
func TestSpinnerOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(os.Args[0], "call", "test_sleep", "--args", `{"ms":2000}`)
	cmd.Env = cliEnvironment(t)
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
	s := newScreen(ptmx)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s", code, s.text())
	}
	if stdout.String() != "slept 2000 ms\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	s.waitFor(t, "\r\x1b[K") // the line is cleared at the end
	screen := s.text()
	if !strings.Contains(screen, "Running test_sleep…") || !strings.ContainsAny(screen, strings.Join(frames, "")) {
		t.Errorf("no spinner on the terminal: %q", screen)
	}
}

// TestNoSpinnerWhenNotATerminal: with stderr a pipe, a long call and the
// start of imported servers print nothing but their results.
func TestNoSpinnerWhenNotATerminal(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "test_sleep", "--args", `{"ms":1000}`).expect(t, 0)
	if r.stdout != "slept 1000 ms\n" || r.stderr != "" {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	dir := t.TempDir()
	cfg := writeConfig(t, fmt.Sprintf(`mcpServers:
  self:
    command: %q
    args: [mcp, --workspace, %q]
    env: {%s: "1", TOOLBELT_DATA: %q, XDG_CONFIG_HOME: %q, NO_COLOR: "1", GORACE: "atexit_sleep_ms=0"}
`, os.Args[0], workspaceWith(t), cliEnv, filepath.Join(dir, "data"), filepath.Join(dir, "config")))
	r = runCLI(t, "", "--config", cfg, "mcp", "servers").expect(t, 0)
	if r.stderr != "" || strings.ContainsAny(r.stdout, "\r\x1b") {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// TestSpinnerWhileImportedServersStart: on a terminal, starting an imported
// server that takes its time (as npx does while it downloads one) shows
// what is being waited for on stderr; stdout carries only the listing.
func TestSpinnerWhileImportedServersStart(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	dir := t.TempDir()
	// The server starts only after a pause, as one being downloaded would.
	slow := filepath.Join(dir, "slow-server")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nsleep 2\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`mcpServers:
  slow:
    command: %q
    args: [%q, mcp, --workspace, %q]
    env: {%s: "1", TOOLBELT_DATA: %q, XDG_CONFIG_HOME: %q, NO_COLOR: "1", GORACE: "atexit_sleep_ms=0"}
`, slow, os.Args[0], workspaceWith(t), cliEnv, filepath.Join(dir, "data"), filepath.Join(dir, "config")))
	cmd := exec.Command(os.Args[0], "--config", cfg, "mcp", "servers")
	cmd.Env = cliEnvironment(t)
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
	s := newScreen(ptmx)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, s.text(), stdout.String())
	}
	// The spinner's line is cleared once the server is up; what the
	// shutdown logs may follow.
	const frame = "Starting the imported MCP servers (slow)…"
	deadline := time.After(30 * time.Second)
	for {
		screen := s.text()
		last := strings.LastIndex(screen, frame)
		if last >= 0 && strings.Contains(screen[last:], "\r\x1b[K") {
			break
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("the spinner's line was never cleared after its last frame:\n%q", screen)
		}
	}
	if !strings.Contains(stdout.String(), "slow") || strings.ContainsAny(stdout.String(), "\r\x1b") {
		t.Errorf("stdout %q", stdout.String())
	}
}

// TestRunSpinnerOnlyOnATerminal: toolbelt run shows a spinner on stderr
// while a slow call runs when stderr is a terminal, with the call's mark
// after it; with --json it draws none, terminal or not (stdout is for
// programs then).
func TestRunSpinnerOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		flags   []string
		spinner bool
	}{{nil, true}, {[]string{"--json"}, false}} {
		t.Run(fmt.Sprint(c.flags), func(t *testing.T) {
			t.Parallel()
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer ptmx.Close()
			s := llmtest.New(t,
				llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "test_sleep", Args: `{"ms":1500}`})},
				llmtest.Response{Body: llmtest.Chat("", "Slept.")})
			args := append([]string{"run", "--model", "openai/x", "--base-url", s.URL + "/v1", "--workspace", t.TempDir()}, c.flags...)
			cmd := exec.Command(os.Args[0], append(args, "sleep a while")...)
			cmd.Env = cliEnvironment(t)
			var stdout bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
			screen := newScreen(ptmx)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			if code := wait(t, cmd); code != 0 {
				t.Fatalf("exit %d: %s", code, screen.text())
			}
			out := screen.all(t)
			spun := strings.Contains(out, "Running test_sleep…") && strings.ContainsAny(out, strings.Join(frames, ""))
			if spun != c.spinner || strings.Contains(out, "\x1b") != c.spinner {
				t.Errorf("spinner shown: %v, want %v:\n%q", spun, c.spinner, out)
			}
			if !strings.Contains(out, "✓ test_sleep ran: slept 1500 ms\n") {
				t.Errorf("the call's mark is missing:\n%q", out)
			}
			if strings.ContainsAny(stdout.String(), "\r\x1b") || !strings.Contains(stdout.String(), "Slept.") {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}
