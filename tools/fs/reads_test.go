package fs_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
)

// readsEnv is a local workspace whose tool context holds the file tools to
// read before edit.
func readsEnv(t *testing.T) *env {
	t.Helper()
	e := localEnv(t)
	tc := &tool.Context{Identity: tool.Identity{Workspace: e.root}, FSRoot: e.root, FS: e.b}
	tbfs.ReadsService.Set(tc, tbfs.NewReads())
	e.r = newRunner(t, tc)
	return e
}

// in runs a call as session key's.
func (e *env) in(t *testing.T, session, name string, args any) tool.ResultMessage {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx := invoke.WithCaller(context.Background(), tool.Identity{SessionKey: session})
	return e.r.Run(ctx, tool.Call{ID: tool.NewCallID("call"), Name: name, Arguments: raw})
}

// TestReadBeforeEdit: with the read state on, each step of a session is
// refused or runs as read before edit says, and a refused change leaves
// the file as it was.
func TestReadBeforeEdit(t *testing.T) {
	t.Parallel()
	edit := func(p, old, new string) map[string]any {
		return map[string]any{"path": p, "edits": []map[string]string{{"oldText": old, "newText": new}}}
	}
	write := func(p, content string) map[string]any { return map[string]any{"path": p, "content": content} }
	read := func(p string) map[string]any { return map[string]any{"path": p} }
	update := func(p, old, new string) map[string]any {
		return map[string]any{"patch": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-" + old + "\n+" + new + "\n*** End Patch"}
	}
	type step struct {
		session, tool string
		args          map[string]any
		put           string // content put on disk (a.txt) before the step, by someone else
		refused       string // "" when the call must succeed; else a part of the refusal
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  string // a.txt at the end
	}{
		{"edit unread is refused", []step{{tool: "edit", args: edit("a.txt", "one", "two"), refused: "has not been read in this session"}}, "one\n"},
		{"read then edit", []step{{tool: "read", args: read("a.txt")}, {tool: "edit", args: edit("a.txt", "one", "two")}}, "two\n"},
		{"a range read counts", []step{{tool: "read", args: map[string]any{"path": "a.txt", "offset": 1, "limit": 1}}, {tool: "edit", args: edit("a.txt", "one", "two")}}, "two\n"},
		{"another spelling of the path", []step{{tool: "read", args: read("./sub/../a.txt")}, {tool: "edit", args: edit("a.txt", "one", "two")}}, "two\n"},
		{"write over unread is refused", []step{{tool: "write", args: write("a.txt", "x\n"), refused: "has not been read"}}, "one\n"},
		{"write over read", []step{{tool: "read", args: read("a.txt")}, {tool: "write", args: write("a.txt", "x\n")}}, "x\n"},
		{"patch update unread is refused", []step{{tool: "apply_patch", args: update("a.txt", "one", "two"), refused: "has not been read"}}, "one\n"},
		{"patch update read", []step{{tool: "read", args: read("a.txt")}, {tool: "apply_patch", args: update("a.txt", "one", "two")}}, "two\n"},
		{"own edits need no new read", []step{{tool: "read", args: read("a.txt")}, {tool: "edit", args: edit("a.txt", "one", "two")}, {tool: "edit", args: edit("a.txt", "two", "three")}}, "three\n"},
		{"changed on disk since the read", []step{{tool: "read", args: read("a.txt")}, {put: "one\nmore\n", tool: "edit", args: edit("a.txt", "one", "two"), refused: "changed on disk since this session last read it"}}, "one\nmore\n"},
		{"read again after a change", []step{{tool: "read", args: read("a.txt")}, {put: "one\nmore\n", tool: "read", args: read("a.txt")}, {tool: "edit", args: edit("a.txt", "one", "two")}}, "two\nmore\n"},
		{"changed and changed back", []step{{tool: "read", args: read("a.txt")}, {put: "zzz\n"}, {put: "one\n", tool: "edit", args: edit("a.txt", "one", "two")}}, "two\n"},
		{"another session's read does not count", []step{{session: "s2", tool: "read", args: read("a.txt")}, {tool: "edit", args: edit("a.txt", "one", "two"), refused: "has not been read"}}, "one\n"},
		{"each session its own", []step{{session: "s2", tool: "read", args: read("a.txt")}, {session: "s2", tool: "edit", args: edit("a.txt", "one", "two")}, {tool: "edit", args: edit("a.txt", "two", "x"), refused: "has not been read"}}, "two\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := readsEnv(t)
			e.put(t, map[string]string{"a.txt": "one\n", "sub/keep": ""})
			for i, s := range tc.steps {
				if s.put != "" {
					e.put(t, map[string]string{"a.txt": s.put})
				}
				if s.tool == "" {
					continue
				}
				msg := e.in(t, cmp.Or(s.session, "s1"), s.tool, s.args)
				switch got := text(msg); {
				case s.refused == "" && msg.IsError:
					t.Fatalf("step %d (%s) failed: %s", i, s.tool, got)
				case s.refused != "" && (!msg.IsError || !strings.Contains(got, s.refused)):
					t.Fatalf("step %d (%s): %v %s; want refused with %q", i, s.tool, msg.IsError, got, s.refused)
				}
			}
			if got := e.get(t, "a.txt"); got != tc.want {
				t.Errorf("a.txt = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReadBeforeEditCreatesFreely: a new file needs no read, nor does a
// file the patch adds and then changes; a context without the read state
// is not held to it.
func TestReadBeforeEditCreatesFreely(t *testing.T) {
	t.Parallel()
	e := readsEnv(t)
	if msg := e.in(t, "s", "write", map[string]any{"path": "new/b.txt", "content": "b\n"}); msg.IsError {
		t.Fatal(text(msg))
	}
	if msg := e.in(t, "s", "edit", map[string]any{"path": "new/b.txt", "edits": []map[string]string{{"oldText": "b", "newText": "c"}}}); msg.IsError {
		t.Fatalf("edit of a file the session wrote: %s", text(msg))
	}
	patch := "*** Begin Patch\n*** Add File: c.txt\n+c\n*** Update File: c.txt\n@@\n-c\n+d\n*** End Patch"
	if msg := e.in(t, "s", "apply_patch", map[string]any{"patch": patch}); msg.IsError {
		t.Fatal(text(msg))
	}
	free := localEnv(t)
	free.put(t, map[string]string{"a.txt": "one\n"})
	free.ok(t, "edit", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "one", "newText": "two"}}})
}
