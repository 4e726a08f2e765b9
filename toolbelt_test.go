package toolbelt_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// policyYAML denies exec and asks before every write.
const policyYAML = `
tools:
  deny: [exec]
  ask:
    - tool: write
`

type waitArgs struct {
	Label string `json:"label"`
}

// open opens a root on a new workspace and data directory, with tools
// beside the built-ins; it is closed when the test ends.
func open(t *testing.T, confirm invoke.Confirmer, tools ...tool.Tool) (*toolbelt.Toolbelt, string, string) {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	ws, data := t.TempDir(), t.TempDir()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: data, Tools: tools, Confirm: confirm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	return tb, ws, data
}

func call(t *testing.T, tb *toolbelt.Toolbelt, id, name, args string) tool.ResultMessage {
	t.Helper()
	r, err := tb.Runner(tool.Identity{Channel: "test", Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), tool.Call{ID: id, Name: name, Arguments: json.RawMessage(args)})
}

// records reads the audit log of the data directory's database as it is,
// without moving in what a spool still holds.
func records(t *testing.T, data string) []string {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := auditlog.New(st).List(context.Background(), auditlog.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.CallID)
	}
	return out
}

func TestDeniedCallIsBlockedWithItsReasonAndAudited(t *testing.T) {
	tb, _, data := open(t, nil)
	msg := call(t, tb, "c1", "exec", `{"command":"echo hi"}`)
	if !msg.IsError || !strings.Contains(msg.Content[0].Text, `"blocked"`) || !strings.Contains(msg.Content[0].Text, "deny exec") {
		t.Fatalf("exec ran or was refused without its reason: %+v", msg.Content)
	}
	if err := tb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := records(t, data); len(got) != 1 || got[0] != "c1" {
		t.Fatalf("audit log after Close = %v, want the denied call", got)
	}
}

func TestApprovedChangeIsAskedRecordedAndUndone(t *testing.T) {
	var asked atomic.Int32
	approve := invoke.ConfirmFunc(func(context.Context, invoke.Confirmation) (invoke.Answer, error) {
		asked.Add(1)
		return invoke.Answer{Allow: true, By: "test"}, nil
	})
	tb, ws, _ := open(t, approve)
	file := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(file, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := call(t, tb, "w1", "write", `{"path":"notes.txt","content":"after\n"}`); msg.IsError {
		t.Fatalf("approved write failed: %+v", msg.Content)
	}
	if asked.Load() != 1 {
		t.Fatalf("the person was asked %d times, want once", asked.Load())
	}
	if b, _ := os.ReadFile(file); string(b) != "after\n" {
		t.Fatalf("file after write = %q", b)
	}
	if _, err := tb.Undo(context.Background(), "", "w1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "before\n" {
		t.Fatalf("file after undo = %q, want it restored", b)
	}
}

func TestWriteNobodyApprovesIsBlocked(t *testing.T) {
	tb, ws, _ := open(t, nil)
	msg := call(t, tb, "w1", "write", `{"path":"x.txt","content":"x"}`)
	if !msg.IsError {
		t.Fatalf("a write that needs approval ran without it: %+v", msg.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was written: %v", err)
	}
}

func TestCloseLetsCallsInFlightFinishAndRefusesNewOnes(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	wait := tool.Must(tool.New("wait", "Wait until released.",
		func(_ context.Context, in waitArgs, _ tool.Invocation) (tool.Result, error) {
			if in.Label == "first" {
				close(started)
				<-release
			}
			return tool.Text("done " + in.Label), nil
		}))
	wait.Meta = tool.Meta{ReadOnly: true}
	tb, _, data := open(t, nil, wait)

	first := make(chan tool.ResultMessage)
	go func() { first <- call(t, tb, "first", "wait", `{"label":"first"}`) }()
	<-started
	closed := make(chan error)
	go func() { closed <- tb.Close(context.Background()) }()
	// Once Close has begun, calls are refused; the first is still running.
	for {
		msg := call(t, tb, "late", "wait", `{"label":"late"}`)
		if msg.IsError && strings.Contains(msg.Content[0].Text, toolbelt.ErrClosed.Error()) {
			break
		}
	}
	close(release)
	if msg := <-first; msg.IsError || msg.Content[0].Text != "done first" {
		t.Fatalf("the call in flight did not finish: %+v", msg.Content)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if got := records(t, data); !contains(got, "first") {
		t.Fatalf("audit log after Close = %v, want the call that was in flight", got)
	}
}

func TestCloseWithCallsInFlightPastItsContextSaysSo(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	block := tool.Must(tool.New("block", "Block until released.",
		func(context.Context, waitArgs, tool.Invocation) (tool.Result, error) {
			close(started)
			<-release
			return tool.Text("done"), nil
		}))
	block.Meta = tool.Meta{ReadOnly: true}
	tb, _, _ := open(t, nil, block)
	r, err := tb.Runner(tool.Identity{Channel: "test", Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	go r.Run(context.Background(), tool.Call{ID: "b1", Name: "block", Arguments: json.RawMessage(`{"label":"b"}`)})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tb.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want it to say calls were still in flight", err)
	}
}

func TestOpenFailsOnAWorkspaceAsDataDirectory(t *testing.T) {
	ws := t.TempDir()
	_, err := toolbelt.Open(context.Background(), toolbelt.Options{Workspace: ws, DataDir: ws})
	if err == nil || !strings.Contains(err.Error(), "opening the store") {
		t.Fatalf("Open = %v, want the store refused", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestStoreAfterOpensTheStoreWhenACallNeedsIt(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	never := make(chan struct{})
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Workspace: ws, DataDir: data, StoreAfter: never})
	if err != nil {
		t.Fatal(err)
	}
	if msg := call(t, tb, "r1", "ls", `{}`); msg.IsError {
		t.Fatalf("ls before the store's signal: %+v", msg.Content)
	}
	if err := tb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := records(t, data); len(got) != 1 || got[0] != "r1" {
		t.Fatalf("audit log = %v, want the call", got)
	}
}

// TestDirToolsRunWithTheExecSettings: the root loads directory tools as
// the CLI does: their handlers get the secret-looking variables exec's
// envAllow lets through, and no others.
func TestDirToolsRunWithTheExecSettings(t *testing.T) {
	t.Setenv("TB_ALLOWED_TOKEN", "let-through")
	t.Setenv("TB_HIDDEN_TOKEN", "kept-back")
	tools := t.TempDir()
	folder := filepath.Join(tools, "show_env")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	md := `{"name": "show_env", "description": "Says two variables.", "readOnly": true}`
	sh := "cat >/dev/null\nprintf '{\"success\": true, \"summary\": \"[%s][%s]\"}\\n' \"${TB_ALLOWED_TOKEN:-}\" \"${TB_HIDDEN_TOKEN:-}\"\n"
	for name, text := range map[string]string{"metadata.json": md, "handler.sh": sh} {
		if err := os.WriteFile(filepath.Join(folder, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	yaml := "tools:\n  dirs: [{path: " + tools + "}]\n  exec:\n    envAllow: [TB_ALLOWED_TOKEN]\n"
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close(context.Background())
	msg := call(t, tb, "c1", "show_env", `{}`)
	if text := msg.Content[0].Text; msg.IsError || !strings.Contains(text, "[let-through][]") {
		t.Fatalf("show_env = %s, want the allowed variable only", text)
	}
}

// TestImportedToolsAreThereWhenOpenReturns imports a real MCP server (the
// mcp-server example, built for the test) that is slow to start: Open
// starts it first and ends once it answered, so the first call finds its
// tool. (Were Open not to wait, the call would come before the server's
// two seconds are up; a slow machine could hide that, never the reverse.)
func TestImportedToolsAreThereWhenOpenReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an MCP server")
	}
	bin := filepath.Join(t.TempDir(), "words")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/mcp-server").CombinedOutput(); err != nil {
		t.Fatalf("building the example server: %v\n%s", err, out)
	}
	yaml := "mcpServers:\n  words: {command: sh, args: [-c, 'sleep 2; exec \"$0\"', " + bin + "]}\n"
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close(context.Background())
	msg := call(t, tb, "c1", "words__word_count", `{"text":"one two three"}`)
	if msg.IsError || !strings.Contains(msg.Content[0].Text, "3") {
		t.Fatalf("words__word_count = %+v, want the imported tool's count", msg.Content)
	}
}

// TestRequiredSandboxStopsTheStart: a configuration that requires the
// sandbox where bubblewrap cannot be found does not open, and says why,
// rather than leaving every command to fail (or to run unsandboxed).
func TestRequiredSandboxStopsTheStart(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("toolbelt.yaml", []byte("tools:\n  exec:\n    sandbox: {required: true, bwrap: /nonexistent/bwrap}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err == nil {
		tb.Close(context.Background())
		t.Fatal("Open succeeded")
	}
	if want := "toolbelt.yaml:3:25: tools.exec.sandbox.required is true, but bubblewrap (/nonexistent/bwrap) is not installed"; !strings.Contains(err.Error(), want) {
		t.Errorf("Open: %v, want %q", err, want)
	}
}
