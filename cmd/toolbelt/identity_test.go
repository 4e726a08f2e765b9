package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// sharedEnvironment is cliEnvironment for several processes that share one
// data directory, as the processes of one user do.
func sharedEnvironment(t *testing.T, data string, extra ...string) []string {
	t.Helper()
	return append(append(os.Environ(), cliEnv+"=1", "NO_COLOR=1", "TOOLBELT_DATA="+data, "TOOLBELT_WORKSPACE=",
		"XDG_CONFIG_HOME="+filepath.Join(t.TempDir(), "config"), "TOOLBELT_DATABASE_URL=", "TOOLBELT_CONFIG=",
		envAuditKey+"=", envAuditKeyFile+"="), extra...)
}

// mcpSession starts `toolbelt mcp` in a workspace and connects a client.
func mcpSession(t *testing.T, environ []string, ws string) (*sdk.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = environ
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "identity-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cmd
}

// auditRecordsUntil reads the audit log until done accepts its records, or
// 30 s have passed, and returns the last read: while a server runs, the
// records of a stream of calls reach the log a moment after their results
// (the spool's drain gathers them for up to 100 ms).
func auditRecordsUntil(t *testing.T, environ []string, done func([]audit.Record) bool, args ...string) []audit.Record {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rs := auditRecords(t, environ, args...)
		if done(rs) || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func auditRecords(t *testing.T, environ []string, args ...string) []audit.Record {
	t.Helper()
	r := runCLIWith(t, environ, "", "", append([]string{"audit", "--json"}, args...)...).expect(t, 0)
	var rs []audit.Record
	if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	for i := range rs {
		var b bytes.Buffer
		if len(rs[i].Arguments) > 0 && json.Compact(&b, rs[i].Arguments) == nil {
			rs[i].Arguments = b.Bytes()
		}
	}
	return rs
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTwoMCPProcessesAndUndoElsewhere is the scenario of the hardening
// issue: two `toolbelt mcp` processes, in workspaces A and B, share the
// data directory. Their calls' ids must not collide; `undo` of A's call run
// from anywhere restores A's file and leaves B alone; undo of B's call with
// --workspace A is refused and changes nothing.
func TestTwoMCPProcessesAndUndoElsewhere(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	realA, wsB, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	// A is reached through a symbolic link: records carry the resolved path.
	wsA := filepath.Join(t.TempDir(), "link-to-a")
	if err := os.Symlink(realA, wsA); err != nil {
		t.Fatal(err)
	}
	realA, _ = filepath.EvalSymlinks(realA)
	wsB, _ = filepath.EvalSymlinks(wsB)
	for ws, text := range map[string]string{realA: "A original\n", wsB: "B original\n"} {
		if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Both servers run at once, each making three writes.
	var wg sync.WaitGroup
	for _, c := range []struct{ ws, name string }{{wsA, "A"}, {wsB, "B"}} {
		cs, _ := mcpSession(t, environ, c.ws)
		wg.Go(func() {
			defer cs.Close()
			for i, file := range []string{"f.txt", "g.txt", "h.txt"} {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write", Arguments: map[string]any{
					"path": file, "content": fmt.Sprintf("%s new %d\n", c.name, i)}})
				if err != nil || res.IsError {
					t.Errorf("write in %s: %v %s", c.name, err, textOf(res))
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	ids := map[string]bool{}
	var idA, idB string
	for _, r := range auditRecords(t, environ, "--tool", "write") {
		if ids[r.CallID] {
			t.Fatalf("call id %s used twice", r.CallID)
		}
		ids[r.CallID] = true
		if !strings.HasPrefix(r.CallID, "mcp_") || len(r.CallID) != len("mcp_")+18 {
			t.Errorf("call id %q", r.CallID)
		}
		if !strings.Contains(string(r.Arguments), `"f.txt"`) {
			continue
		}
		switch r.Workspace {
		case realA:
			idA = r.CallID
		case wsB:
			idB = r.CallID
		default:
			t.Errorf("record of call %s names workspace %q, want %s or %s", r.CallID, r.Workspace, realA, wsB)
		}
	}
	if len(ids) != 6 || idA == "" || idB == "" {
		t.Fatalf("ids %v; A's %q, B's %q", ids, idA, idB)
	}
	// Undo of B's call, asked for in A: refused, nothing touched.
	r := runCLIWith(t, environ, elsewhere, "", "undo", idB, "--workspace", wsA).expect(t, 1)
	if want := fmt.Sprintf("call %s changed files in %s, not in %s: nothing was undone", idB, wsB, realA); !strings.Contains(r.stderr, want) {
		t.Errorf("refusal: %q, want %q", r.stderr, want)
	}
	if got := readFile(t, filepath.Join(wsB, "f.txt")); got != "B new 0\n" {
		t.Errorf("B's file after a refused undo: %q", got)
	}
	// Undo of A's call from another directory, without --workspace.
	r = runCLIWith(t, environ, elsewhere, "", "undo", idA).expect(t, 0)
	if r.stdout != "Undid call "+idA+": reverted f.txt.\n" {
		t.Errorf("undo A: %q %q", r.stdout, r.stderr)
	}
	if a, b := readFile(t, filepath.Join(realA, "f.txt")), readFile(t, filepath.Join(wsB, "f.txt")); a != "A original\n" || b != "B new 0\n" {
		t.Errorf("after undoing A's call: A %q, B %q", a, b)
	}
	// Undo of B's call run from inside A: done in B, where it ran.
	runCLIWith(t, environ, realA, "", "undo", idB).expect(t, 0)
	if a, b := readFile(t, filepath.Join(realA, "f.txt")), readFile(t, filepath.Join(wsB, "f.txt")); a != "A original\n" || b != "B original\n" {
		t.Errorf("after undoing B's call: A %q, B %q", a, b)
	}
	// The undos are in the audit, the refused one as such.
	var outcomes []string
	for _, r := range auditRecords(t, environ, "--tool", "undo") {
		outcomes = append(outcomes, fmt.Sprintf("%s %s %s", strings.TrimSpace(string(r.Arguments)), r.Workspace, r.ErrorClass))
	}
	want := []string{
		fmt.Sprintf(`{"callId":%q} %s refused`, idB, realA),
		fmt.Sprintf(`{"callId":%q} %s `, idA, realA),
		fmt.Sprintf(`{"callId":%q} %s `, idB, wsB),
	}
	if strings.Join(outcomes, "\n") != strings.Join(want, "\n") {
		t.Errorf("undo records:\n%s\nwant\n%s", strings.Join(outcomes, "\n"), strings.Join(want, "\n"))
	}
}

// TestResultReadStaysInItsWorkspace: a kept output is read back from its
// own workspace (through any spelling of it), not from another.
func TestResultReadStaysInItsWorkspace(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	wsA, wsB := workspaceWith(t), t.TempDir()
	link := filepath.Join(t.TempDir(), "a")
	if err := os.Symlink(wsA, link); err != nil {
		t.Fatal(err)
	}
	r := runCLIWith(t, environ, "", "", "call", "read", "--args", `{"path":"notes.txt"}`, "--max-result-chars", "300", "--json", "--workspace", wsA).expect(t, 0)
	var msg struct {
		ToolCallID string `json:"toolCallId"`
		Content    []struct{ Text string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil || !strings.Contains(msg.Content[0].Text, "result_read") {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	args := fmt.Sprintf(`{"callId":%q,"offset":0,"limit":10}`, msg.ToolCallID)
	r = runCLIWith(t, environ, "", "", "call", "result_read", "--args", args, "--workspace", wsB).expect(t, 1)
	if !strings.Contains(r.stderr+r.stdout, "No full result is kept for call") {
		t.Errorf("from another workspace: %q %q", r.stdout, r.stderr)
	}
	for _, ws := range []string{wsA, link} {
		r = runCLIWith(t, environ, "", "", "call", "result_read", "--args", args, "--workspace", ws).expect(t, 0)
		if !strings.HasPrefix(r.stdout, strings.Repeat("x", 10)) {
			t.Errorf("from %s: %q", ws, r.stdout)
		}
	}
}

// TestAuditSurvivesKill: a real `toolbelt mcp` answers calls, sequential and
// concurrent, and is killed with SIGKILL; every answered call is in the
// audit read back, and the chain is intact.
func TestAuditSurvivesKill(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	ws := t.TempDir()
	cs, cmd := mcpSession(t, environ, ws)
	defer cs.Close()
	const sequential, concurrent = 12, 24
	call := func(i int) {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "test_greet", Arguments: map[string]any{"name": fmt.Sprint("n", i)}})
		if err != nil || res.IsError {
			t.Errorf("call %d: %v %s", i, err, textOf(res))
		}
	}
	for i := range sequential {
		call(i)
	}
	var wg sync.WaitGroup
	for i := range concurrent {
		wg.Go(func() { call(sequential + i) })
	}
	wg.Wait()
	// Every call above was answered. Kill the server without warning.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Closing the session waits for the process (it is reaped, its spool
	// lock gone).
	_ = cs.Close()
	rs := auditRecords(t, environ, "--tool", "test_greet")
	names := map[string]bool{}
	for _, r := range rs {
		names[string(r.Arguments)] = true
	}
	for i := range sequential + concurrent {
		if !names[fmt.Sprintf(`{"name":"n%d"}`, i)] {
			t.Errorf("answered call n%d is not in the audit (%d records)", i, len(rs))
		}
	}
	if r := runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0); !strings.Contains(r.stdout, "chain intact") {
		t.Errorf("verify: %s", r.stdout)
	}
}

// TestAgentCallIDsAreToolbelts: local model servers number their calls
// call_0, call_1, … in every process. Two agent runs in one workspace whose
// model gave both writes the id call_0 get ids of their own for the audit,
// the undo journal and kept outputs (the provider's kept beside them), so
// undoing the first takes back its write and not the second's.
func TestAgentCallIDsAreToolbelts(t *testing.T) {
	t.Parallel()
	environ := sharedEnvironment(t, t.TempDir())
	ws := t.TempDir()
	write := func(path string) llmtest.Response {
		return llmtest.Response{Body: llmtest.Chat("", "Writing.", llmtest.Call{ID: "call_0", Name: "write", Args: fmt.Sprintf(`{"path":%q,"content":"x"}`, path)})}
	}
	s := llmtest.New(t, write("a.txt"), llmtest.Response{Body: llmtest.Chat("", "Done.")}, write("b.txt"), llmtest.Response{Body: llmtest.Chat("", "Done.")})
	for range 2 {
		runCLIWith(t, environ, "", "", "run", "--model", "vllm/m", "--base-url", s.URL+"/v1", "--workspace", ws, "write it").expect(t, 0)
	}
	// The model still gets its own id back.
	if reqs := s.Requests(); len(reqs) != 4 || !strings.Contains(compactJSON(t, reqs[1].Body), `"tool_call_id":"call_0"`) {
		t.Fatalf("the result does not answer the model's id call_0")
	}
	rs := auditRecords(t, environ, "--tool", "write")
	if len(rs) != 2 {
		t.Fatalf("%d write records", len(rs))
	}
	for _, r := range rs {
		if !strings.HasPrefix(r.CallID, "call_") || len(r.CallID) != len("call_")+18 || r.ProviderCallID != "call_0" {
			t.Errorf("record: callId %q providerCallId %q", r.CallID, r.ProviderCallID)
		}
	}
	if rs[0].CallID == rs[1].CallID {
		t.Fatalf("both runs' calls have the id %s", rs[0].CallID)
	}
	runCLIWith(t, environ, "", "", "undo", rs[0].CallID).expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt after undoing the call that wrote it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil {
		t.Errorf("the other run's b.txt after undoing the first run's call: %v", err)
	}
}

// TestUndoOutcomesAreAudited: an undo that finds the file changed since
// (conflict) and one of a call that changed nothing are in the audit too,
// each as an undo record naming the call and its outcome.
func TestUndoOutcomesAreAudited(t *testing.T) {
	t.Parallel()
	environ := sharedEnvironment(t, t.TempDir())
	ws := t.TempDir()
	runCLIWith(t, environ, "", "", "call", "write", "--args", `{"path":"f.txt","content":"by the call"}`, "--workspace", ws).expect(t, 0)
	writes := auditRecords(t, environ, "--tool", "write")
	if len(writes) != 1 {
		t.Fatalf("%d write records", len(writes))
	}
	id := writes[0].CallID
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("changed since"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLIWith(t, environ, "", "", "undo", id).expect(t, 1)
	if got := readFile(t, filepath.Join(ws, "f.txt")); got != "changed since" {
		t.Errorf("an undo in conflict changed the file: %q", got)
	}
	runCLIWith(t, environ, "", "", "undo", "cli_never").expect(t, 1)
	var got []string
	for _, r := range auditRecords(t, environ, "--tool", "undo") {
		got = append(got, fmt.Sprintf("%s %v %s", r.Arguments, r.IsError, r.ErrorClass))
		if !strings.HasPrefix(r.CallID, "undo_") {
			t.Errorf("undo record id %q", r.CallID)
		}
	}
	want := []string{fmt.Sprintf(`{"callId":%q} true conflict`, id), `{"callId":"cli_never"} true nothing-to-undo`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("undo records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
