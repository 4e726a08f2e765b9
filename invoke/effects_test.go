package invoke_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
)

// goRule is the manual's example: ask before writing Go files.
var goRule = policy.AskRule{Tools: []string{"write"}, When: map[string][]string{"path": {"*.go"}}}

// fileWorkspace is a real workspace for the file tools: main.go, notes.txt,
// link.txt (a link to main.go) and an empty docs/; with the file tools
// registered on a registry of their own, and tools added.
func fileWorkspace(t *testing.T, tools ...tool.Tool) (string, *registry.Registry, *tool.Context) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", "notes.txt": "hi\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("main.go", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := tbfs.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tools {
		if err := reg.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
	b, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return ws, reg, &tool.Context{Identity: tool.Identity{Workspace: ws}, FSRoot: ws, FS: b}
}

// snapshot returns every regular file of the workspace and its content.
func snapshot(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, ws+"/")] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func patchOf(body string) string {
	b, _ := json.Marshal(map[string]string{"patch": "*** Begin Patch\n" + body + "*** End Patch"})
	return string(b)
}

// goChanges are calls of every tool that changes files, each changing a Go
// file by another way than a "path" argument naming it.
var goChanges = []struct{ name, tool, args string }{
	{"write", "write", `{"path":"main.go","content":"package main\n"}`},
	{"write a path to clean", "write", `{"path":"./docs/../main.go","content":"package main\n"}`},
	{"write through a link", "write", `{"path":"link.txt","content":"package main\n"}`},
	{"write in another case", "write", `{"path":"MAIN.GO","content":"package main\n"}`},
	{"write a new file", "write", `{"path":"docs/new.go","content":"package docs\n"}`},
	{"edit", "edit", `{"path":"main.go","edits":[{"oldText":"hi","newText":"hello"}]}`},
	{"edit through a link", "edit", `{"path":"link.txt","edits":[{"oldText":"hi","newText":"hello"}]}`},
	{"edit in Claude Code's shape", "Edit", `{"file_path":"main.go","old_string":"hi","new_string":"hello"}`},
	{"patch an update", "apply_patch", patchOf("*** Update File: main.go\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
	{"patch an added file", "apply_patch", patchOf("*** Add File: docs/new.go\n+package docs\n")},
	{"patch a deletion", "apply_patch", patchOf("*** Delete File: main.go\n")},
	{"patch a move from a Go file", "apply_patch", patchOf("*** Update File: main.go\n*** Move to: main.txt\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
	{"patch a move to a Go file", "apply_patch", patchOf("*** Update File: notes.txt\n*** Move to: notes.go\n@@\n-hi\n+// hi\n")},
	{"patch through a link", "apply_patch", patchOf("*** Update File: link.txt\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
	{"patch among other files", "apply_patch", patchOf("*** Add File: docs/a.md\n+# A\n*** Update File: main.go\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
}

// TestFileRulesFollowTheEffects: the manual's rule — ask before writing Go
// files — asks for every call of write, edit and apply_patch that would
// change a Go file, however the file is named; the person asked sees the
// rule and the files. Nobody approving, nothing changes. Calls that change
// other files run.
func TestFileRulesFollowTheEffects(t *testing.T) {
	t.Parallel()
	for _, c := range goChanges {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws, reg, tc := fileWorkspace(t)
			before := snapshot(t, ws)
			a := &asker{answer: invoke.Answer{Allow: false, Reason: "no"}}
			r := invoke.New(reg, tc, invoke.WithPolicy(&policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{goRule}}}), invoke.WithConfirmer(a))
			msg := r.Run(context.Background(), tool.Call{ID: "c", Name: c.tool, Arguments: json.RawMessage(c.args)})
			if len(a.asked) != 1 {
				t.Fatalf("not asked; result: %s", text(msg))
			}
			q := a.asked[0]
			if !strings.Contains(q.Reason, `policy (global: ask write when path matches "*.go")`) {
				t.Errorf("reason %q", q.Reason)
			}
			if q.Effects == nil || !slices.ContainsFunc(q.Effects.Files, func(f string) bool { return strings.HasSuffix(strings.ToLower(f), ".go") }) {
				t.Errorf("the person was not shown the Go file: %+v", q.Effects)
			}
			if !msg.IsError || !strings.Contains(text(msg), "The user denied this call") {
				t.Errorf("result %s", text(msg))
			}
			if after := snapshot(t, ws); !maps.Equal(before, after) {
				t.Errorf("files changed without approval: %v", after)
			}
		})
	}
	for _, c := range []struct{ name, tool, args string }{
		{"write a text file", "write", `{"path":"notes.txt","content":"bye\n"}`},
		{"edit a text file", "edit", `{"path":"notes.txt","edits":[{"oldText":"hi","newText":"bye"}]}`},
		{"patch text files", "apply_patch", patchOf("*** Add File: docs/a.md\n+# A\n*** Update File: notes.txt\n*** Move to: notes.md\n@@\n-hi\n+bye\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, reg, tc := fileWorkspace(t)
			r := invoke.New(reg, tc, invoke.WithPolicy(&policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{goRule}}}))
			if msg := r.Run(context.Background(), tool.Call{ID: "c", Name: c.tool, Arguments: json.RawMessage(c.args)}); msg.IsError {
				t.Errorf("did not run: %s", text(msg))
			}
		})
	}
}

// TestFileRulesFailClosed: a rule on files that names a tool which cannot
// list the files it changes asks for each of its calls; a read-only tool
// is asked about only for the paths it names; and a call whose preview
// fails is not run (the model is told why).
func TestFileRulesFailClosed(t *testing.T) {
	t.Parallel()
	mutate := fn("mutate", echo) // changes who knows what
	look := fn("look", echo)
	look.Meta.ReadOnly = true
	_, reg, tc := fileWorkspace(t, mutate, look)
	p := &policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{
		goRule,
		{Tools: []string{"mutate", "look"}, When: map[string][]string{"path": {"secrets/**"}}},
	}}}
	r := invoke.New(reg, tc, invoke.WithPolicy(p))
	for _, c := range []struct {
		tool, args, want string
	}{
		{"mutate", `{"path":"a.txt"}`, `needs a person's approval (requested by policy (global: ask mutate when path may match \"secrets/**\" (the files the call would change are not known)))`},
		{"look", `{"path":"secrets/key"}`, `needs a person's approval (requested by policy (global: ask look when path matches \"secrets/**\"))`},
		{"look", `{"path":"a.txt"}`, `{"path":"a.txt"}`},
		{"edit", `{"path":"main.go","edits":[{"oldText":"not there","newText":"x"}]}`, "oldText was not found in main.go"},
	} {
		if got := text(r.Run(context.Background(), tool.Call{ID: "c", Name: c.tool, Arguments: json.RawMessage(c.args)})); !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %s\nwant %s", c.tool, c.args, got, c.want)
		}
	}
}

// TestBeforeHooksSeeTheFiles: a before hook is given the files a call
// touches — links resolved, both sides of a move — so that a hook guarding
// Go files blocks a patch that never names one in a path argument.
func TestBeforeHooksSeeTheFiles(t *testing.T) {
	t.Parallel()
	ws, reg, tc := fileWorkspace(t)
	before := snapshot(t, ws)
	var mu sync.Mutex
	seen := map[string]invoke.BeforeToolCall{}
	hooks := invoke.NewHooks()
	hooks.OnBefore("no-go", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		mu.Lock()
		seen[c.CallID] = c
		mu.Unlock()
		for _, f := range c.Files {
			if strings.HasSuffix(f, ".go") {
				return invoke.BeforeDecision{Block: true, Reason: "no Go files: " + f}, nil
			}
		}
		return invoke.BeforeDecision{}, nil
	})
	r := invoke.New(reg, tc, invoke.WithHooks(hooks))
	for i, c := range goChanges {
		if c.name == "write in another case" {
			continue // a new file MAIN.GO: not a .go suffix to this hook
		}
		id := c.name
		msg := r.Run(context.Background(), tool.Call{ID: id, Name: c.tool, Arguments: json.RawMessage(c.args)})
		if !strings.Contains(text(msg), `"reason":"no Go files: `) {
			t.Errorf("%d %s: not blocked: %s (hook saw %+v)", i, c.name, text(msg), seen[id])
		}
	}
	if got := seen["patch a move to a Go file"]; !slices.Equal(got.Files, []string{"notes.go", "notes.txt"}) || !got.FilesListed {
		t.Errorf("a move: the hook saw %v (listed %v)", got.Files, got.FilesListed)
	}
	if got := seen["write through a link"]; !slices.Contains(got.Files, "main.go") || !got.FilesListed {
		t.Errorf("a link: the hook saw %v", got.Files)
	}
	if after := snapshot(t, ws); !maps.Equal(before, after) {
		t.Errorf("files changed: %v", after)
	}
	msg := r.Run(context.Background(), tool.Call{ID: "read", Name: "read", Arguments: json.RawMessage(`{"path":"link.txt"}`)})
	if got := seen["read"]; !strings.Contains(text(msg), `"reason":"no Go files: main.go"`) || !got.FilesListed {
		t.Errorf("a read through a link: %s, hook saw %+v", text(msg), got)
	}
}

// TestHookParametersAreDecidedAgain: a hook that changes where a call
// writes has the policy decide again on the files it now touches.
func TestHookParametersAreDecidedAgain(t *testing.T) {
	t.Parallel()
	ws, reg, tc := fileWorkspace(t)
	hooks := invoke.NewHooks()
	hooks.OnBefore("redirect", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		return invoke.BeforeDecision{Params: map[string]any{"path": "main.go"}}, nil
	})
	r := invoke.New(reg, tc, invoke.WithHooks(hooks), invoke.WithPolicy(&policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{goRule}}}))
	msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "write", Arguments: json.RawMessage(`{"path":"notes.txt","content":"x"}`)})
	if !strings.Contains(text(msg), `needs a person's approval (requested by policy (global: ask write when path matches \"*.go\"))`) {
		t.Errorf("result %s", text(msg))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(b) == "x" {
		t.Error("main.go was written without approval")
	}
}

// TestExplain: Explain decides as the policy step does, on the files the
// call touches, and says what it was shown; it runs nothing.
func TestExplain(t *testing.T) {
	t.Parallel()
	ws, reg, tc := fileWorkspace(t)
	r := invoke.New(reg, tc, invoke.WithPolicy(&policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{goRule}}}))
	req, res, err := r.Explain(context.Background(), tool.Call{Name: "apply_patch", Arguments: json.RawMessage(goChanges[11].args)})
	if err != nil || res.Decision != policy.Ask || !slices.Equal(req.Files, []string{"main.go", "main.txt"}) || !req.FilesListed {
		t.Errorf("explain: %v %+v %+v", err, res, req)
	}
	if _, err := os.Stat(filepath.Join(ws, "main.txt")); err == nil {
		t.Error("explain ran the call")
	}
	if _, _, err := r.Explain(context.Background(), tool.Call{Name: "write", Arguments: json.RawMessage(`{"path":1}`)}); err == nil || !strings.Contains(err.Error(), "Missing required parameter: content") {
		t.Errorf("invalid arguments: %v", err)
	}
	if _, _, err := r.Explain(context.Background(), tool.Call{Name: "wirte"}); err == nil || !strings.Contains(err.Error(), `"write"`) {
		t.Errorf("unknown tool: %v", err)
	}
}
