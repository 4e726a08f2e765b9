package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/store"
)

// consoleOn opens the store of the data directory data, as toolbelt
// serve's console has it, and beats its heartbeat until the test ends.
func consoleOn(t *testing.T, data string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if err := st.Pending().Beat(ctx, "http://127.0.0.1:7777"); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
		st.Close()
	})
	return st
}

// runWaiting starts toolbelt run without a terminal, in a child process,
// on the data directory data with the configuration yaml, whose model asks
// for test_danger; it returns what the run ends with.
func runWaiting(t *testing.T, data, yaml string) (*llmtest.Server, <-chan cliResult) {
	t.Helper()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_d", Name: "test_danger", Args: `{"target":"build"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Done.")})
	cfg := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := make(chan cliResult, 1)
	go func() {
		out <- runCLIWith(t, cliEnvironment(t), "", "", "--config", cfg, "--data", data,
			"run", "--model", "openai/x", "--base-url", s.URL+"/v1", "--workspace", t.TempDir(), "clean the build")
	}()
	return s, out
}

// waitingRequest returns the first request that waits in st's queue; it
// fails the test if the run ends first.
func waitingRequest(t *testing.T, st *store.Store, done <-chan cliResult) store.PendingApproval {
	t.Helper()
	for {
		select {
		case r := <-done:
			t.Fatalf("the run ended without waiting for the console:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
		default:
		}
		list, err := st.Pending().List(context.Background(), store.PendingFilter{State: store.PendingWaiting})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			return list[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunWithoutTerminalWaitsForTheConsole: toolbelt run without a
// terminal puts a call that needs approval in the console's queue, says
// on stderr where, and runs it once the console allows it.
func TestRunWithoutTerminalWaitsForTheConsole(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	console := consoleOn(t, data)
	s, done := runWaiting(t, data, "{}\n")
	p := waitingRequest(t, console, done)
	if p.Tool != "test_danger" || !strings.Contains(p.Effects, "rm -rf build") {
		t.Errorf("waiting: %+v", p)
	}
	if err := console.Pending().Decide(context.Background(), p.ID, store.PendingDecision{Allow: true, By: "console (ada)"}); err != nil {
		t.Fatal(err)
	}
	r := (<-done).expect(t, 0)
	if !strings.Contains(r.stderr, "waiting for approval in the console: http://127.0.0.1:7777/approvals/"+p.ID) {
		t.Errorf("stderr does not say where the call waits:\n%s", r.stderr)
	}
	if second := string(s.Requests()[1].Body); !strings.Contains(second, "deleted build") {
		t.Errorf("the model was not given the result of the allowed call (%d bytes sent to it)", len(second))
	}
}

// TestRunWithoutTerminalTimesOutInTheConsole: a call nobody decides in
// console.approvalTimeout is denied, and the model is told why.
func TestRunWithoutTerminalTimesOutInTheConsole(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	console := consoleOn(t, data)
	s, done := runWaiting(t, data, "console:\n  approvalTimeout: 1s\n")
	(<-done).expect(t, 0)
	if second := string(s.Requests()[1].Body); !strings.Contains(second, "No one approved this call in the console within 1s, so it was not run.") {
		t.Errorf("the model was not told the call timed out (%d bytes sent to it)", len(second))
	}
	if list, err := console.Pending().List(context.Background(), store.PendingFilter{State: store.PendingExpired}); err != nil || len(list) != 1 {
		t.Errorf("expired requests: %+v %v", list, err)
	}
}
