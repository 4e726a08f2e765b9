package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/store"
)

// approvingClient is an MCP client whose user allows each call once.
func approvingClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "sessions-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, nil
		},
	})
}

// serveHTTP starts `toolbelt serve` on a free loopback port in ws and
// returns its MCP endpoint; the server is killed when the test ends.
func serveHTTP(t *testing.T, environ []string, ws string) string {
	t.Helper()
	banner, _ := serveBanner(t, os.Args[0], environ, "--addr", "127.0.0.1:0", "--workspace", ws)
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("the server printed no address:\n%s", banner)
	}
	return m[1]
}

// keptCallID calls read on notes.txt, which the 300-character limit cuts,
// and returns the id result_read takes for the full output.
func keptCallID(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "notes.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read: %v %s", err, textOf(res))
	}
	m := regexp.MustCompile(`call result_read with \{"callId":"(mcp_[0-9a-z]+)"`).FindStringSubmatch(textOf(res))
	if m == nil {
		t.Fatalf("the read was not cut with a result_read hint: %s", textOf(res))
	}
	return m[1]
}

// resultRead reads the first 10 characters of a kept output.
func resultRead(t *testing.T, cs *sdk.ClientSession, id string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "result_read", Arguments: map[string]any{"callId": id, "offset": 0, "limit": 10}})
	if err != nil {
		t.Fatalf("result_read: %v", err)
	}
	return textOf(res), res.IsError
}

// TestMCPSessionsKeepApart: two MCP sessions in one workspace, sharing the
// data directory — two stdio processes, and two HTTP sessions of one
// server — cannot read each other's kept outputs, nor see, follow or stop
// each other's background commands; each session reads its own; the audit
// tells the sessions apart.
func TestMCPSessionsKeepApart(t *testing.T) {
	t.Parallel()
	ws := workspaceWith(t)
	cfg := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("limits:\n  maxResultChars: 300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	environ := sharedEnvironment(t, t.TempDir(), "TOOLBELT_CONFIG="+cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	t.Run("stdio", func(t *testing.T) {
		a, _ := mcpSession(t, environ, ws)
		defer a.Close()
		b, _ := mcpSession(t, environ, ws)
		defer b.Close()
		id := keptCallID(t, a)
		if text, isErr := resultRead(t, b, id); !isErr || !strings.Contains(text, "No full result is kept for call") {
			t.Errorf("another stdio process read the kept output: %v %q", isErr, text)
		}
		if text, isErr := resultRead(t, a, id); isErr || !strings.HasPrefix(text, strings.Repeat("x", 10)) {
			t.Errorf("the session that kept the output: %v %q", isErr, text)
		}
	})

	t.Run("http", func(t *testing.T) {
		url := serveHTTP(t, environ, ws)
		connect := func() *sdk.ClientSession {
			cs, err := approvingClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}
		a, b := connect(), connect()
		defer a.Close()
		defer b.Close()
		if a.ID() == "" || a.ID() == b.ID() {
			t.Fatalf("session ids %q and %q", a.ID(), b.ID())
		}
		id := keptCallID(t, a)
		if text, isErr := resultRead(t, b, id); !isErr || !strings.Contains(text, "No full result is kept for call") {
			t.Errorf("another HTTP session read the kept output: %v %q", isErr, text)
		}
		if text, isErr := resultRead(t, a, id); isErr || !strings.HasPrefix(text, strings.Repeat("x", 10)) {
			t.Errorf("the session that kept the output: %v %q", isErr, text)
		}
		call := func(cs *sdk.ClientSession, name string, args map[string]any) (string, bool) {
			t.Helper()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return textOf(res), res.IsError
		}
		text, isErr := call(a, "exec", map[string]any{"command": "sleep 60", "background": true})
		m := regexp.MustCompile(`"sessionId":\s*"([^"]+)"`).FindStringSubmatch(text)
		if isErr || m == nil {
			t.Fatalf("exec in the background: %v %s", isErr, text)
		}
		proc := m[1]
		if text, _ := call(b, "process", map[string]any{"action": "list"}); strings.Contains(text, proc) {
			t.Errorf("session b lists a's command: %s", text)
		}
		for _, action := range []map[string]any{
			{"action": "poll"}, {"action": "log"}, {"action": "write", "data": "injected\n"}, {"action": "kill"}, {"action": "remove"},
		} {
			action["sessionId"] = proc
			if text, isErr := call(b, "process", action); !isErr || !strings.Contains(text, "no session") {
				t.Errorf("session b, %s of a's command: %v %s", action["action"], isErr, text)
			}
		}
		if text, _ := call(b, "process", map[string]any{"action": "clear"}); !strings.Contains(text, "Cleared 0") {
			t.Errorf("session b clears: %s", text)
		}
		if text, _ := call(a, "process", map[string]any{"action": "list"}); !strings.Contains(text, proc) || !strings.Contains(text, "running") {
			t.Errorf("session a lost its command after b's tries: %s", text)
		}
		if text, isErr := call(a, "process", map[string]any{"action": "kill", "sessionId": proc}); isErr {
			t.Errorf("session a kills its command: %s", text)
		}
	})

	// The audit records each call with its own session's key.
	sessions := map[string]map[string]bool{}
	// Wait for the records of every session the check below counts.
	for _, r := range auditRecordsUntil(t, environ, func(rs []audit.Record) bool {
		seen := map[string]map[string]bool{"read": {}, "result_read": {}, "process": {}}
		for _, r := range rs {
			if seen[r.Tool] != nil {
				seen[r.Tool][r.SessionKey] = true
			}
		}
		return len(seen["read"]) >= 2 && len(seen["result_read"]) >= 4 && len(seen["process"]) >= 2
	}) {
		if r.SessionKey == "" {
			t.Errorf("record of %s %s has no session key", r.Tool, r.CallID)
			continue
		}
		if sessions[r.Tool] == nil {
			sessions[r.Tool] = map[string]bool{}
		}
		sessions[r.Tool][r.SessionKey] = true
	}
	// read ran in the two sessions a; result_read in all four (refused in
	// the two sessions b).
	if len(sessions["read"]) != 2 || len(sessions["result_read"]) != 4 || len(sessions["process"]) != 2 {
		t.Errorf("sessions in the audit: %v", sessions)
	}
}

// TestSessionsDelete: toolbelt sessions delete removes a session and its
// transcript and records that in the audit log; a running session is
// refused (exit 1, recorded too), an unknown one is an error (exit 2).
func TestSessionsDelete(t *testing.T) {
	t.Parallel()
	data, ws := t.TempDir(), t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Sessions().Append(ctx, "done-one", ws, "m", []store.SessionMessage{{Role: "user", Body: json.RawMessage(`{"role":"user"}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Sessions().Start(ctx, store.SessionStart{ID: "busy-one", Workspace: ws, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	run := func(code int, args ...string) cliResult {
		t.Helper()
		return runCLI(t, "", append(args, "--data", data, "--workspace", ws)...).expect(t, code)
	}
	if r := run(0, "sessions", "delete", "done-one"); r.stdout != "Deleted session done-one and its 1 message(s).\n" {
		t.Errorf("delete: %q %q", r.stdout, r.stderr)
	}
	if r := run(2, "sessions", "show", "done-one"); !strings.Contains(r.stderr, "no such session") {
		t.Errorf("show after delete: %q", r.stderr)
	}
	if r := run(1, "sessions", "delete", "busy-one"); !strings.Contains(r.stderr, "session busy-one is running: it was not deleted") {
		t.Errorf("delete of a running session: %q", r.stderr)
	}
	if r := run(2, "sessions", "delete", "nobody"); !strings.Contains(r.stderr, "no such session; toolbelt sessions lists them") {
		t.Errorf("delete of an unknown session: %q", r.stderr)
	}
	var recs []audit.Record
	audited := runCLI(t, "", "audit", "--json", "--tool", "sessions_delete", "--data", data).expect(t, 0)
	if err := json.Unmarshal([]byte(audited.stdout), &recs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		var args map[string]string
		_ = json.Unmarshal(r.Arguments, &args)
		got[r.SessionKey] = fmt.Sprintf("%s %v %s %s", r.Channel, r.IsError, r.ErrorClass, args["session"])
	}
	want := map[string]string{
		"done-one": "cli false  done-one",
		"busy-one": "cli true running busy-one",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit of the deletions: %v, want %v", got, want)
	}
}
