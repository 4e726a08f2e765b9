package invoke_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// shapeEnv is a workspace with the real file and shell tools behind a
// runner that approves every call and records what each tool received.
type shapeEnv struct {
	root string
	r    *invoke.Runner
	mu   sync.Mutex
	got  map[string]invoke.BeforeToolCall // by call id
}

func newShapeEnv(t *testing.T) *shapeEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.txt": "one\ntwo\nthree\nfour\n", "b.txt": "x x x\n", "src/main.go": "package main\n// Hello\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := registry.New()
	if err := tbfs.Register(reg); err != nil {
		t.Fatal(err)
	}
	m, err := shell.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	l, err := fsbridge.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e := &shapeEnv{root: root, got: map[string]invoke.BeforeToolCall{}}
	hooks := invoke.NewHooks()
	hooks.OnBefore("record", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		e.mu.Lock()
		e.got[c.CallID] = c
		e.mu.Unlock()
		return invoke.BeforeDecision{}, nil
	})
	e.r = invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: root}, FSRoot: root, FS: l}, invoke.WithHooks(hooks), invoke.WithConfirmer(invoke.AutoApprove))
	return e
}

func (e *shapeEnv) run(t *testing.T, id, name, args string) (tool.ResultMessage, invoke.BeforeToolCall) {
	t.Helper()
	msg := e.r.Run(context.Background(), tool.Call{ID: id, Name: name, Arguments: json.RawMessage(args)})
	e.mu.Lock()
	defer e.mu.Unlock()
	return msg, e.got[id]
}

// TestOtherAgentsShapes: each other agent's shape runs the right tool with
// the arguments in the tool's own shape, the tool's result is what the
// call asked for, and the details name the shape.
func TestOtherAgentsShapes(t *testing.T) {
	e := newShapeEnv(t)
	abs := func(p string) string { return filepath.Join(e.root, p) }
	for _, tc := range []struct {
		who, name, args string
		tool, params    string // the tool and the parameters it received, as JSON
		shape           string // a word of the shape's name in the details
		result          string // in the result's text
	}{
		{"Claude Code", "Read", `{"file_path":"` + abs("a.txt") + `","offset":2,"limit":2}`,
			"read", `{"limit":2,"offset":2,"path":"a.txt"}`, "Claude Code Read", "two\nthree"},
		{"Gemini CLI", "read_file", `{"absolute_path":"` + abs("a.txt") + `","offset":2,"limit":1}`,
			"read", `{"limit":1,"offset":3,"path":"a.txt"}`, "Gemini CLI read_file", "three"},
		{"Claude Code", "Write", `{"file_path":"` + abs("new/c.txt") + `","content":"hi\n"}`,
			"write", `{"content":"hi\n","path":"new/c.txt"}`, "Claude Code Write", "new/c.txt"},
		{"Gemini CLI", "write_file", `{"file_path":"d.txt","content":"yo\n"}`,
			"write", `{"content":"yo\n","path":"d.txt"}`, "Gemini CLI write_file", "d.txt"},
		{"Claude Code", "Edit", `{"file_path":"a.txt","old_string":"one","new_string":"ONE"}`,
			"edit", `{"edits":[{"newText":"ONE","oldText":"one"}],"path":"a.txt"}`, "Claude Code Edit", "a.txt"},
		{"Claude Code", "MultiEdit", `{"file_path":"` + abs("a.txt") + `","edits":[{"old_string":"two","new_string":"TWO"},{"old_string":"four","new_string":"FOUR","replace_all":true}]}`,
			"edit", `{"edits":[{"newText":"TWO","oldText":"two"},{"newText":"FOUR","oldText":"four","replaceAll":true}],"path":"a.txt"}`, "Claude Code MultiEdit", "a.txt"},
		{"Gemini CLI", "replace", `{"file_path":"b.txt","old_string":"x","new_string":"y","expected_replacements":3}`,
			"edit", `{"edits":[{"newText":"y","oldText":"x","replaceAll":true}],"path":"b.txt"}`, "Gemini CLI replace", "b.txt"},
		{"Claude Code", "Bash", `{"command":"echo hi from bash","timeout":120000,"description":"Say hi"}`,
			"exec", `{"command":"echo hi from bash","timeout":120}`, "Claude Code Bash", "hi from bash"},
		{"Codex", "shell", `{"command":["bash","-lc","echo hi from codex"],"workdir":"` + abs("src") + `","timeout_ms":1500}`,
			"exec", `{"command":"echo hi from codex","timeout":2,"workdir":"src"}`, "Codex shell", "hi from codex"},
		{"Codex", "shell", `{"command":["ls","-1","src dir"]}`,
			"exec", `{"command":"ls -1 'src dir'"}`, "Codex shell", "src dir"},
		{"Gemini CLI", "run_shell_command", `{"command":"pwd","directory":"src","description":"where"}`,
			"exec", `{"command":"pwd","workdir":"src"}`, "Gemini CLI run_shell_command", "/src"},
		{"Claude Code", "Grep", `{"pattern":"hello","path":"src","glob":"*.go","-i":true,"-C":1,"head_limit":5,"output_mode":"content"}`,
			"grep", `{"context":1,"glob":"*.go","ignoreCase":true,"limit":5,"path":"src","pattern":"hello"}`, "Claude Code Grep", "// Hello"},
		{"Gemini CLI", "search_file_content", `{"pattern":"Hello","include":"*.go"}`,
			"grep", `{"glob":"*.go","pattern":"Hello"}`, "Gemini CLI search_file_content", "main.go"},
		{"Claude Code", "Glob", `{"pattern":"*.go","path":"` + abs("src") + `"}`,
			"find", `{"path":"src","pattern":"*.go"}`, "Glob", "main.go"},
		{"Gemini CLI", "list_directory", `{"path":"` + abs("src") + `"}`,
			"ls", `{"path":"src"}`, "list_directory", "main.go"},
	} {
		t.Run(tc.who+" "+tc.name, func(t *testing.T) {
			id := "call_" + tc.name
			msg, got := e.run(t, id, tc.name, tc.args)
			if msg.IsError {
				t.Fatalf("error: %s", msg.Content[0].Text)
			}
			params, _ := json.Marshal(got.Params)
			if got.Tool != tc.tool || string(params) != tc.params {
				t.Errorf("ran %s with %s; want %s with %s", got.Tool, params, tc.tool, tc.params)
			}
			if msg.ToolName != tc.tool {
				t.Errorf("result of %q", msg.ToolName)
			}
			if text := msg.Content[0].Text; !strings.Contains(text, tc.result) {
				t.Errorf("result %q lacks %q", text, tc.result)
			}
			d, _ := msg.Details.(map[string]any)
			if s, _ := d["argumentsShape"].(string); !strings.Contains(s, tc.shape) {
				t.Errorf("details.argumentsShape = %v, want %q", d["argumentsShape"], tc.shape)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "a.txt")); string(b) != "ONE\nTWO\nthree\nFOUR\n" {
		t.Errorf("a.txt after the edits: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "b.txt")); string(b) != "y y y\n" {
		t.Errorf("b.txt after replace: %q", b)
	}
}

// Calls in the tools' own shapes pass untouched; other agents' names of
// tools a registry has under that name stay that tool's; an absolute path
// outside the workspace is refused by the file tool, not rewritten.
func TestShapesLeaveOthersAlone(t *testing.T) {
	e := newShapeEnv(t)
	for _, tc := range []struct{ name, args, tool, params string }{
		{"read", `{"path":"a.txt","offset":2}`, "read", `{"offset":2,"path":"a.txt"}`},
		{"exec", `{"command":"echo own","timeout":3}`, "exec", `{"command":"echo own","timeout":3}`},
		{"bash", `{"command":"echo own","timeout":3}`, "exec", `{"command":"echo own","timeout":3}`},
		{"edit", `{"path":"a.txt","edits":[{"oldText":"one","newText":"1"}]}`, "edit", `{"edits":[{"newText":"1","oldText":"one"}],"path":"a.txt"}`},
		{"grep", `{"pattern":"Hello","context":1}`, "grep", `{"context":1,"pattern":"Hello"}`},
		{"ls", `{"path":"src"}`, "ls", `{"path":"src"}`},
	} {
		msg, got := e.run(t, "own_"+tc.name, tc.name, tc.args)
		params, _ := json.Marshal(got.Params)
		d, _ := msg.Details.(map[string]any)
		if msg.IsError || got.Tool != tc.tool || string(params) != tc.params || d["argumentsShape"] != nil {
			t.Errorf("%s %s: ran %s with %s (error %v), details %v", tc.name, tc.args, got.Tool, params, msg.IsError, msg.Details)
		}
	}
	outside := filepath.Join(filepath.Dir(e.root), "elsewhere.txt")
	msg, _ := e.run(t, "outside", "read_file", `{"absolute_path":"`+outside+`"}`)
	env, ok := tool.ParseEnvelope(msg.Content[0].Text)
	if !msg.IsError || !ok || !strings.Contains(env.Error, "outside the workspace") {
		t.Errorf("read_file outside the workspace: %s", msg.Content[0].Text)
	}
	// A tool of the registry's own named like another agent's is that tool.
	reg := registry.New()
	if err := reg.Register(tool.Tool{Name: "replace", Execute: func(_ context.Context, c tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
		return tool.Text("own replace: " + string(c.Arguments)), nil
	}}); err != nil {
		t.Fatal(err)
	}
	own := invoke.New(reg, nil).Run(context.Background(), tool.Call{ID: "r", Name: "replace", Arguments: json.RawMessage(`{"file_path":"a","old_string":"x","new_string":"y"}`)})
	if own.ToolName != "replace" || !strings.HasPrefix(own.Content[0].Text, "own replace") {
		t.Errorf("a registry's own replace: %+v", own)
	}
}

func TestShapeTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, args, want string }{
		// Claude Code's Bash counts milliseconds, rounded up to whole seconds.
		{"Bash", `{"command":"x","timeout":1}`, `{"command":"x","timeout":1}`},
		{"Bash", `{"command":"x","run_in_background":true}`, `{"background":true,"command":"x"}`},
		// Codex: a shell's -c script is the command; other argv is quoted.
		{"shell", `{"command":["sh","-c","a && b"]}`, `{"command":"a \u0026\u0026 b"}`},
		{"shell", `{"command":["printf","%s","it's"]}`, `{"command":"printf %s 'it'\\''s'"}`},
		// Arguments sent as a JSON string are shapes too.
		{"Read", `"{\"file_path\":\"a.txt\"}"`, `{"path":"a.txt"}`},
	} {
		reg := registry.New()
		var got string
		for _, n := range []string{"exec", "read"} {
			if err := reg.Register(tool.Tool{Name: n, Execute: func(_ context.Context, c tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
				got = string(c.Arguments)
				return tool.Text("ok"), nil
			}}); err != nil {
				t.Fatal(err)
			}
		}
		msg := invoke.New(reg, nil).Run(context.Background(), tool.Call{ID: "s", Name: tc.name, Arguments: json.RawMessage(tc.args)})
		if msg.IsError || got != tc.want {
			t.Errorf("%s %s: the tool got %s (error %v %v), want %s", tc.name, tc.args, got, msg.IsError, msg.Content, tc.want)
		}
	}
}
