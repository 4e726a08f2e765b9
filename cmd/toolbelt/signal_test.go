package main

import (
	"context"
	"os"
	"syscall"
	"testing"
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
