package undo_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/undo"
)

// file is a file's content and permission bits.
type file struct {
	data string
	mode fs.FileMode
}

// ws is a workspace with the file tools run through the pipeline, their
// changes recorded in a journal.
type ws struct {
	kind string
	b    fsbridge.Bridge
	j    *undo.MemoryJournal
	r    *invoke.Runner
	root string // for a local workspace
}

func newWS(t *testing.T, kind string) *ws {
	t.Helper()
	w := &ws{kind: kind, j: &undo.MemoryJournal{}}
	if kind == "local" {
		w.root = t.TempDir()
		l, err := fsbridge.OpenLocal(w.root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		w.b = l
	} else {
		m, err := fsbridge.NewMemory()
		if err != nil {
			t.Fatal(err)
		}
		w.b = m
	}
	reg := registry.New()
	if err := tbfs.Register(reg); err != nil {
		t.Fatal(err)
	}
	w.r = invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: w.root}, FSRoot: w.root, FS: w.b, Journal: w.j})
	return w
}

// both runs f on a local workspace (a temporary directory) and an in-memory one.
func both(t *testing.T, f func(t *testing.T, w *ws)) {
	for _, kind := range []string{"local", "memory"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f(t, newWS(t, kind))
		})
	}
}

// seed creates files directly, not through the tools.
func (w *ws) seed(t *testing.T, files map[string]file) {
	t.Helper()
	if m, ok := w.b.(*fsbridge.Memory); ok {
		fsys := fstest.MapFS{}
		for p, f := range files {
			fsys[p] = &fstest.MapFile{Data: []byte(f.data), Mode: f.mode}
		}
		if err := m.Load(fsys); err != nil {
			t.Fatal(err)
		}
		return
	}
	for p, f := range files {
		full := filepath.Join(w.root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, f.mode); err != nil {
			t.Fatal(err)
		}
	}
}

// files returns every regular file of the workspace with its content and mode.
func (w *ws) files(t *testing.T) map[string]file {
	t.Helper()
	out := map[string]file{}
	ctx := context.Background()
	err := w.b.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := w.b.Stat(ctx, p)
		if err != nil {
			return err
		}
		data, err := w.b.ReadFile(ctx, p)
		out[p] = file{string(data), st.Mode().Perm()}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// run runs a call that must succeed.
func (w *ws) run(t *testing.T, id, name string, args any) string {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	msg := w.r.Run(context.Background(), tool.Call{ID: id, Name: name, Arguments: raw})
	var parts []string
	for _, c := range msg.Content {
		parts = append(parts, c.Text)
	}
	if msg.IsError {
		t.Fatalf("%s %s failed: %s", name, raw, strings.Join(parts, "\n"))
	}
	return strings.Join(parts, "\n")
}

func (w *ws) undo(id string) (undo.Report, error) {
	return undo.Undo(context.Background(), w.j, w.b, id)
}

func (w *ws) mustUndo(t *testing.T, id string) undo.Report {
	t.Helper()
	r, err := w.undo(id)
	if err != nil {
		t.Fatalf("undo %s: %v", id, err)
	}
	return r
}

func sameFiles(t *testing.T, got, want map[string]file) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("files\n%v\nwant\n%v", got, want)
	}
}

func edit(path, oldText, newText string) map[string]any {
	return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": oldText, "newText": newText}}}
}

func TestUndoWrite(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		seed := map[string]file{"run.sh": {"#!/bin/sh\necho old\n", 0o755}, "keep.txt": {"k", 0o600}}
		w.seed(t, seed)
		w.run(t, "w1", "write", map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho new"})
		r := w.mustUndo(t, "w1")
		sameFiles(t, w.files(t), seed)
		if r.String() != "Undid call w1: reverted run.sh." {
			t.Errorf("report %q", r)
		}
	})
}

func TestUndoCreatedFileIsDeleted(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		seed := map[string]file{"a.txt": {"a\n", 0o644}}
		w.seed(t, seed)
		w.run(t, "w1", "write", map[string]any{"path": "new/dir/b.txt", "content": "b\n"})
		r := w.mustUndo(t, "w1")
		sameFiles(t, w.files(t), seed)
		if len(r.Files) != 1 || r.Files[0] != (undo.Restored{Path: "new/dir/b.txt", Action: "deleted"}) {
			t.Errorf("report %+v", r)
		}
	})
}

func TestUndoDeletedFileIsRestored(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		seed := map[string]file{"bin/tool.sh": {"#!/bin/sh\n\x00binary-ish\xff\n", 0o755}, "a.txt": {"a\n", 0o644}}
		w.seed(t, seed)
		w.run(t, "p1", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: bin/tool.sh\n*** End Patch"})
		if _, ok := w.files(t)["bin/tool.sh"]; ok {
			t.Fatal("the patch did not delete the file")
		}
		r := w.mustUndo(t, "p1")
		sameFiles(t, w.files(t), seed)
		if len(r.Files) != 1 || r.Files[0].Action != "recreated" {
			t.Errorf("report %+v", r)
		}
	})
}

func TestUndoEdit(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		seed := map[string]file{"win.txt": {"\ufeffone\r\ntwo\r\nthree\r\n", 0o640}}
		w.seed(t, seed)
		w.run(t, "e1", "edit", edit("win.txt", "two\n", "2\n"))
		if got := w.files(t)["win.txt"].data; got != "\ufeffone\r\n2\r\nthree\r\n" {
			t.Fatalf("the edit made %q", got)
		}
		w.mustUndo(t, "e1")
		sameFiles(t, w.files(t), seed)
	})
}

// patch adds c.txt, deletes d.txt, moves b.go to src/e.go with a change and
// changes a.txt.
const patch = "*** Begin Patch\n" +
	"*** Add File: c.txt\n+c\n" +
	"*** Delete File: d.txt\n" +
	"*** Update File: b.go\n*** Move to: src/e.go\n@@\n package b\n-func B() {}\n+func E() {}\n" +
	"*** Update File: a.txt\n@@\n-a\n+A\n" +
	"*** End Patch"

var patchSeed = map[string]file{
	"a.txt": {"a\n", 0o644},
	"b.go":  {"package b\nfunc B() {}\n", 0o600},
	"d.txt": {"d\n", 0o755},
}

func TestUndoPatch(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		w.seed(t, patchSeed)
		w.run(t, "p1", "apply_patch", map[string]any{"patch": patch})
		sameFiles(t, w.files(t), map[string]file{
			"a.txt":    {"A\n", 0o644},
			"c.txt":    {"c\n", 0o644},
			"src/e.go": {"package b\nfunc E() {}\n", 0o600},
		})
		r := w.mustUndo(t, "p1")
		sameFiles(t, w.files(t), patchSeed)
		got := map[string]string{}
		for _, f := range r.Files {
			got[f.Path] = f.Action
		}
		want := map[string]string{"a.txt": "reverted", "b.go": "recreated", "c.txt": "deleted", "d.txt": "recreated", "src/e.go": "deleted"}
		if !maps.Equal(got, want) {
			t.Errorf("report %v, want %v", got, want)
		}
	})
}

// TestUndoRefusesAfterLaterChange: a file changed since the call stops the
// undo of every file of the call, and the refusal shows the difference.
func TestUndoRefusesAfterLaterChange(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		w.seed(t, patchSeed)
		w.run(t, "p1", "apply_patch", map[string]any{"patch": patch})
		w.run(t, "e2", "edit", edit("src/e.go", "func E() {}", "func E() { later() }"))
		w.run(t, "w3", "write", map[string]any{"path": "d.txt", "content": "back\n"})
		afterCalls := w.files(t)

		_, err := w.undo("p1")
		var ce *undo.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v, want a conflict", err)
		}
		sameFiles(t, w.files(t), afterCalls)
		want := []undo.Conflict{
			{Path: "src/e.go", Problem: "changed since", Diff: "diff --git a/src/e.go b/src/e.go\n--- a/src/e.go\n+++ b/src/e.go\n@@ -1,2 +1,2 @@\n package b\n-func E() {}\n+func E() { later() }\n"},
			{Path: "d.txt", Problem: "created since"},
		}
		if len(ce.Files) != len(want) {
			t.Fatalf("conflicts %+v, want %+v", ce.Files, want)
		}
		for _, c := range want {
			found := false
			for _, g := range ce.Files {
				found = found || g == c
			}
			if !found {
				t.Errorf("conflict %+v missing from %+v", c, ce.Files)
			}
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "cannot undo call p1: 2 files changed since the call, so nothing was undone") ||
			!strings.Contains(msg, "src/e.go: changed since\ndiff --git") || !strings.Contains(msg, "+func E() { later() }") || !strings.Contains(msg, "d.txt: created since") {
			t.Errorf("message:\n%s", msg)
		}

		// Undoing the later calls first, newest first, makes it possible.
		w.mustUndo(t, "w3")
		w.mustUndo(t, "e2")
		w.mustUndo(t, "p1")
		sameFiles(t, w.files(t), patchSeed)
	})
}

func TestUndoRefusesAfterDeletion(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		w.run(t, "w1", "write", map[string]any{"path": "x.txt", "content": "x\n"})
		w.run(t, "p2", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: x.txt\n*** End Patch"})
		_, err := w.undo("w1")
		var ce *undo.ConflictError
		if !errors.As(err, &ce) || len(ce.Files) != 1 || ce.Files[0] != (undo.Conflict{Path: "x.txt", Problem: "deleted since"}) {
			t.Fatalf("error %v, want x.txt deleted since", err)
		}
		if len(w.files(t)) != 0 {
			t.Errorf("files appeared: %v", w.files(t))
		}
	})
}

func TestUndoTwiceHasNothingToUndo(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		w.run(t, "w1", "write", map[string]any{"path": "x.txt", "content": "x\n"})
		w.mustUndo(t, "w1")
		_, err := w.undo("w1")
		if !errors.Is(err, undo.ErrNothingToUndo) || !strings.Contains(err.Error(), "nothing to undo for call w1") {
			t.Errorf("second undo: %v", err)
		}
		if _, err := w.undo("never-ran"); !errors.Is(err, undo.ErrNothingToUndo) {
			t.Errorf("unknown call: %v", err)
		}
	})
}

// TestUndoIsAllOrNothing: undo writes through the bridge it is given, so
// its protected paths still apply; when a write is refused midway, the
// files already restored are put back, and the call can be undone later.
func TestUndoIsAllOrNothing(t *testing.T) {
	t.Parallel()
	w := newWS(t, "local")
	w.seed(t, patchSeed)
	w.run(t, "p1", "apply_patch", map[string]any{"patch": patch})
	afterCall := w.files(t)
	guarded, err := fsbridge.OpenLocal(w.root, fsbridge.Protect("d.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Close()
	_, err = undo.Undo(context.Background(), w.j, guarded, "p1")
	if !errors.Is(err, fsbridge.ErrRefused) || !strings.Contains(err.Error(), "the files already restored were put back") {
		t.Fatalf("error %v, want a refusal", err)
	}
	sameFiles(t, w.files(t), afterCall)
	w.mustUndo(t, "p1")
	sameFiles(t, w.files(t), patchSeed)
}

// TestUndoSeveralCalls: the calls of several turns are taken back
// together, to the files as they were before the first; a file changed
// between two of them by something the journal did not record (a person,
// a shell command), or changed since the last, is a conflict, and nothing
// is undone.
func TestUndoSeveralCalls(t *testing.T) {
	t.Parallel()
	both(t, func(t *testing.T, w *ws) {
		seed := map[string]file{"a.txt": {"one\n", 0o644}, "keep.txt": {"k", 0o600}}
		w.seed(t, seed)
		w.run(t, "c1", "edit", edit("a.txt", "one", "two"))
		w.run(t, "c2", "write", map[string]any{"path": "b.txt", "content": "b"})
		w.run(t, "c3", "edit", edit("a.txt", "two", "three"))
		r, err := undo.Undo(context.Background(), w.j, w.b, "c1", "none", "c2", "c3")
		if err != nil {
			t.Fatal(err)
		}
		sameFiles(t, w.files(t), seed)
		if r.String() != "Undid 3 calls (c1, c2, c3): deleted b.txt, reverted a.txt." {
			t.Errorf("report %q", r)
		}

		// Between c4 and c5, someone else changes a.txt.
		w.run(t, "c4", "edit", edit("a.txt", "one", "two"))
		w.seed(t, map[string]file{"a.txt": {"two, by hand\n", 0o644}})
		w.run(t, "c5", "edit", edit("a.txt", "by hand", "by hand, then by the model"))
		before := w.files(t)
		_, err = undo.Undo(context.Background(), w.j, w.b, "c4", "c5")
		var conflict *undo.ConflictError
		if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "a.txt: changed between call c4 and call c5 by something the journal did not record") {
			t.Fatalf("err %v", err)
		}
		sameFiles(t, w.files(t), before)
		// c5 alone is still undone, to the hand-made change.
		w.mustUndo(t, "c5")
		if got := w.files(t)["a.txt"].data; got != "two, by hand\n" {
			t.Errorf("a.txt = %q", got)
		}
	})
}
