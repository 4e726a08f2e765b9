package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestInterrupted: a command stopped by Ctrl-C was interrupted (exit 130);
// one stopped by SIGTERM, as services are, or ending by itself was not.
func TestInterrupted(t *testing.T) {
	// Not parallel: the signals are sent to the test process, which the
	// contexts catch while they watch.
	for _, tc := range []struct {
		sig  syscall.Signal
		want bool
	}{{syscall.SIGINT, true}, {syscall.SIGTERM, false}, {0, false}} {
		var e env
		ctx, stop := e.interruptible()
		if tc.sig != 0 {
			if err := syscall.Kill(os.Getpid(), tc.sig); err != nil {
				t.Fatal(err)
			}
			<-ctx.Done()
		}
		stop()
		if got := e.interrupted(); got != tc.want || ctx.Err() != context.Canceled {
			t.Errorf("%v: interrupted %v, want %v (%v)", tc.sig, got, tc.want, ctx.Err())
		}
	}
}

// TestCtrlCExits130: toolbelt serve and toolbelt mcp, stopped with Ctrl-C,
// exit with 130.
func TestCtrlCExits130(t *testing.T) {
	t.Parallel()
	ws := workspaceWith(t)
	_, cmd := serveBanner(t, os.Args[0], cliEnvironment(t), "--addr", "127.0.0.1:0", "--workspace", ws)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != exitInterrupted {
		t.Errorf("serve after Ctrl-C: %v, exit code %d", err, cmd.ProcessState.ExitCode())
	}
}

// TestCtrlCStopsMCPWith130: toolbelt mcp, stopped with Ctrl-C while a
// client is connected, exits with 130.
func TestCtrlCStopsMCPWith130(t *testing.T) {
	t.Parallel()
	cs, cmd := mcpSession(t, cliEnvironment(t), workspaceWith(t))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cs.Wait()
	_ = cs.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitInterrupted {
		t.Errorf("mcp after Ctrl-C: %v", cmd.ProcessState)
	}
}

// TestCtrlCInChat: in toolbelt chat, Ctrl-C during a turn stops the turn
// (the chat goes on to the next prompt); Ctrl-C at the prompt ends the
// chat with 130.
func TestCtrlCInChat(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Sleeping.", llmtest.Call{ID: "toolu_S", Name: "test_sleep", Args: `{"ms":60000}`})})
	cmd := exec.Command(os.Args[0], "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", t.TempDir(), "--yes")
	cmd.Env = cliEnvironment(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor := func(what string, n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for strings.Count(stderr.String(), what) < n {
			if time.Now().After(deadline) {
				t.Fatalf("stderr never showed %q %d times:\n%s", what, n, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("> ", 1)
	fmt.Fprintln(stdin, "sleep for a minute")
	waitFor("→ test_sleep", 1)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor("(stopped)", 1)
	waitFor("> ", 2)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if cmd.ProcessState.ExitCode() != exitInterrupted {
			t.Errorf("chat after Ctrl-C at the prompt: %v, exit code %d\n%s", err, cmd.ProcessState.ExitCode(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("chat still runs 30 s after Ctrl-C at the prompt:\n%s", stderr.String())
	}
}
