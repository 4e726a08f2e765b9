package cmdhook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
)

// echoTool returns its arguments as JSON text.
func echoTool(name string, groups ...string) tool.Tool {
	return tool.Tool{
		Name: name, Description: "echo",
		Meta: tool.Meta{Groups: groups, ReadOnly: true},
		Execute: func(_ context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
			return tool.Text(string(call.Arguments)), nil
		},
	}
}

func setup(t *testing.T, before, after []Hook) (*invoke.Runner, string) {
	t.Helper()
	reg := registry.New()
	for _, tt := range []tool.Tool{echoTool("echo"), echoTool("fs_read"), echoTool("fetch", "web")} {
		if err := reg.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	h := invoke.NewHooks()
	Install(h, before, after, nil, Options{Registry: reg, Dir: ws})
	return invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: ws, SessionKey: "s"}}, invoke.WithHooks(h)), ws
}

func textOf(m tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func run(r *invoke.Runner, name, args string) tool.ResultMessage {
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func TestBeforeHooks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		hook    Hook
		tool    string
		blocked string // the reason, when blocked
		text    string // the result text, when not blocked
	}{
		{"exit 0, no output allows", Hook{Command: "cat >/dev/null"}, "echo", "", `{"a":1}`},
		{"exit 2 blocks with stderr", Hook{Command: "echo 'no echo today' >&2; exit 2"}, "echo", "no echo today", ""},
		{"json block", Hook{Command: `echo '{"decision":"block","reason":"policy says no"}'`}, "echo", "policy says no", ""},
		{"json params", Hook{Command: `echo '{"params":{"a":2,"b":"x"}}'`}, "echo", "", `{"a":2,"b":"x"}`},
		{"other exit code fails closed", Hook{Command: "exit 1"}, "echo", invoke.HookFailed, ""},
		{"garbage fails closed", Hook{Command: "echo not-json"}, "echo", invoke.HookFailed, ""},
		{"unknown decision fails closed", Hook{Command: `echo '{"decision":"maybe"}'`}, "echo", invoke.HookFailed, ""},
		{"timeout fails closed", Hook{Command: "sleep 30", Timeout: 200 * time.Millisecond}, "echo", invoke.HookFailed, ""},
		{"crash fails closed", Hook{Command: "kill -KILL $$"}, "echo", invoke.HookFailed, ""},
		{"name match", Hook{Tools: []string{"echo"}, Command: "exit 2"}, "echo", "blocked by the exit 2 hook", ""},
		{"name mismatch", Hook{Tools: []string{"other"}, Command: "exit 2"}, "echo", "", `{"a":1}`},
		{"glob match", Hook{Tools: []string{"fs_*"}, Command: "exit 2"}, "fs_read", "blocked by the exit 2 hook", ""},
		{"glob mismatch", Hook{Tools: []string{"fs_*"}, Command: "exit 2"}, "echo", "", `{"a":1}`},
		{"group match", Hook{Tools: []string{"group:web"}, Command: "exit 2"}, "fetch", "blocked by the exit 2 hook", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, _ := setup(t, []Hook{c.hook}, nil)
			msg := run(r, c.tool, `{"a":1}`)
			got := textOf(msg)
			if c.blocked != "" {
				var e tool.Envelope
				if err := json.Unmarshal([]byte(got), &e); err != nil || e.Status != "blocked" || e.Reason != c.blocked {
					t.Fatalf("result %s, want blocked with reason %q", got, c.blocked)
				}
				return
			}
			if msg.IsError || got != c.text {
				t.Fatalf("result %s, want %s", got, c.text)
			}
		})
	}
}

func TestHookInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.json"), filepath.Join(dir, "after.json")
	r, ws := setup(t,
		[]Hook{{Command: "cat > " + before}},
		[]Hook{{Tools: []string{"group:web"}, Command: "cat > " + after}, {Tools: []string{"echo"}, Command: "cat > " + after + ".echo"}})
	if msg := run(r, "fetch", `{"url":"https://example.com"}`); msg.IsError {
		t.Fatal(textOf(msg))
	}
	var in BeforeInput
	b, _ := os.ReadFile(before)
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("before input %q: %v", b, err)
	}
	if in.Event != "before_tool_call" || in.Tool != "fetch" || in.CallID != "c1" || in.Params["url"] != "https://example.com" ||
		in.Context.Workspace != ws || in.Context.Session != "s" || in.Risk != "low" {
		t.Errorf("before input = %+v", in)
	}
	var out AfterInput
	b, _ = os.ReadFile(after)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("after input %q: %v", b, err)
	}
	if out.Event != "after_tool_call" || out.Tool != "fetch" || out.Result == nil || out.Result.IsError || len(out.Result.Content) != 1 {
		t.Errorf("after input = %+v", out)
	}
	if _, err := os.Stat(after + ".echo"); err == nil {
		t.Error("an after hook for echo ran for fetch")
	}
}

func TestFailingAfterHookChangesNothing(t *testing.T) {
	t.Parallel()
	r, _ := setup(t, nil, []Hook{{Command: "exit 7"}})
	if msg := run(r, "echo", `{"a":1}`); msg.IsError || textOf(msg) != `{"a":1}` {
		t.Errorf("result = %s", textOf(msg))
	}
}

func TestAskDecisionAsksAPerson(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := reg.Register(echoTool("echo")); err != nil {
		t.Fatal(err)
	}
	h := invoke.NewHooks()
	Install(h, []Hook{{Name: "guard", Command: `echo '{"decision":"ask","reason":"touches production"}'`}}, nil, nil, Options{})
	var asked []invoke.Confirmation
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, invoke.WithHooks(h), invoke.WithConfirmer(invoke.ConfirmFunc(
		func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
			asked = append(asked, c)
			return invoke.Answer{Allow: false, Reason: "no"}, nil
		})))
	msg := run(r, "echo", `{}`)
	if !msg.IsError || len(asked) != 1 || !strings.Contains(asked[0].Reason+asked[0].Message, "touches production") {
		t.Errorf("result %s, asked %+v", textOf(msg), asked)
	}
}

func TestPersistHookRewritesWhatIsStored(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := reg.Register(echoTool("echo")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "redact.py")
	redact := `import json, sys
m = json.load(sys.stdin)["message"]
print(json.dumps({"content": [{"type": "text", "text": c["text"].replace("swordfish", "[redacted]")} for c in m["content"]]}))
`
	if err := os.WriteFile(script, []byte(redact), 0o644); err != nil {
		t.Fatal(err)
	}
	h := invoke.NewHooks()
	Install(h, nil, nil, []Hook{
		{Command: "python3 " + script},
		{Tools: []string{"other"}, Command: "echo this hook does not match >&2; exit 1"},
	}, Options{Registry: reg})
	var stored []tool.ResultMessage
	r := invoke.New(reg, &tool.Context{}, invoke.WithHooks(h), invoke.WithPersist(func(_ context.Context, m tool.ResultMessage) {
		stored = append(stored, m)
	}))
	msg := run(r, "echo", `{"password":"swordfish"}`)
	if !strings.Contains(textOf(msg), "swordfish") {
		t.Errorf("the caller's result was changed: %s", textOf(msg))
	}
	if len(stored) != 1 || textOf(stored[0]) != `{"password":"[redacted]"}` || stored[0].ToolCallID != "c1" {
		t.Errorf("stored = %+v", stored)
	}
}

// TestHookForWriteRunsForEveryFileTool: a hook for write runs for edit and
// apply_patch too, and reads the files each call would change, links
// resolved, both sides of a move; a hook for edit does not run for write.
func TestHookForWriteRunsForEveryFileTool(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.go", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := tbfs.Register(reg); err != nil {
		t.Fatal(err)
	}
	b, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	log := filepath.Join(t.TempDir(), "inputs")
	h := invoke.NewHooks()
	Install(h, []Hook{
		{Name: "guard-writes", Tools: []string{"write"}, Command: "cat >> " + log + "; echo >> " + log + "; echo 'not today' >&2; exit 2"},
		{Name: "edits-only", Tools: []string{"edit"}, Command: "echo edits-only >> " + log + ".edit", Priority: 10},
	}, nil, nil, Options{Registry: reg, Dir: ws})
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: ws}, FSRoot: ws, FS: b}, invoke.WithHooks(h))
	for _, c := range []struct{ tool, args string }{
		{"write", `{"path":"link.txt","content":"x"}`},
		{"edit", `{"path":"main.go","edits":[{"oldText":"main","newText":"app"}]}`},
		{"apply_patch", `{"patch":"*** Begin Patch\n*** Update File: main.go\n*** Move to: app.go\n@@\n-package main\n+package app\n*** End Patch"}`},
	} {
		if msg := run(r, c.tool, c.args); !strings.Contains(textOf(msg), `"reason":"not today"`) {
			t.Errorf("%s was not blocked by the hook for write: %s", c.tool, textOf(msg))
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var tools, files []string
	for line := range strings.Lines(strings.TrimSpace(string(data))) {
		var in BeforeInput
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !in.FilesListed {
			t.Errorf("%s: files not listed", in.Tool)
		}
		tools = append(tools, in.Tool)
		files = append(files, strings.Join(in.Files, "+"))
	}
	if want := []string{"write", "edit", "apply_patch"}; !slices.Equal(tools, want) {
		t.Errorf("the hook ran for %v, want %v", tools, want)
	}
	if want := []string{"main.go", "main.go", "app.go+main.go"}; !slices.Equal(files, want) {
		t.Errorf("the hook read files %v, want %v", files, want)
	}
	if edits, _ := os.ReadFile(log + ".edit"); strings.Count(string(edits), "edits-only") != 1 {
		t.Errorf("the hook for edit ran %d times, want once (for edit only)", strings.Count(string(edits), "edits-only"))
	}
}
