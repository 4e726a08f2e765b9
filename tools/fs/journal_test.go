package fs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

// journaled returns an in-memory workspace whose file changes are recorded
// in j, reached through bridge (the workspace's own when nil).
func journaled(t *testing.T, j tool.Journal, wrap func(fsbridge.Bridge) fsbridge.Bridge) *env {
	t.Helper()
	e := memoryEnv(t)
	b := e.b
	if wrap != nil {
		b = wrap(b)
	}
	e.r = newRunner(t, &tool.Context{FS: b, Journal: j})
	return e
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func changes(t *testing.T, j *undo.MemoryJournal, id string) []tool.FileChange {
	t.Helper()
	cs, err := j.Changes(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestJournalRecordsEveryChange(t *testing.T) {
	t.Parallel()
	j := &undo.MemoryJournal{}
	e := journaled(t, j, nil)
	e.put(t, map[string]string{"a.txt": "a\n", "b.go": "package b\n", "d.txt": "d\n"})
	e.ok(t, "write", map[string]any{"path": "new.txt", "content": "n"})
	e.ok(t, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "a", "newText": "A"}}})
	e.ok(t, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: d.txt\n*** Update File: b.go\n*** Move to: src/b.go\n@@\n-package b\n+package src\n*** End Patch"})
	// The helper gives every call the id call_1: one call's changes, in the
	// order the calls touched the files (a move: the old path, then the new).
	want := []tool.FileChange{
		{Path: "new.txt", Existed: false, Exists: true, After: []byte("n"), AfterSHA256: sha("n")},
		{Path: "a.txt", Existed: true, Before: []byte("a\n"), Mode: 0o644, Exists: true, After: []byte("A\n"), AfterSHA256: sha("A\n")},
		{Path: "d.txt", Existed: true, Before: []byte("d\n"), Mode: 0o644, Exists: false},
		{Path: "b.go", Existed: true, Before: []byte("package b\n"), Mode: 0o644, Exists: false},
		{Path: "src/b.go", Existed: false, Exists: true, After: []byte("package src\n"), AfterSHA256: sha("package src\n")},
	}
	got := changes(t, j, "call_1")
	if len(got) != len(want) {
		t.Fatalf("recorded %+v\nwant %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Path != w.Path || g.Existed != w.Existed || string(g.Before) != string(w.Before) || g.Mode != w.Mode ||
			g.Exists != w.Exists || string(g.After) != string(w.After) || g.AfterSHA256 != w.AfterSHA256 {
			t.Errorf("change %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestJournalRecordsOnlyWhatHappened: failed calls, rolled-back patches,
// dry runs and writes that change nothing record nothing.
func TestJournalRecordsOnlyWhatHappened(t *testing.T) {
	t.Parallel()
	j := &undo.MemoryJournal{}
	e := journaled(t, j, func(b fsbridge.Bridge) fsbridge.Bridge { return &failingBridge{Bridge: b, failOn: "z.txt"} })
	e.put(t, map[string]string{"a.txt": "a\n"})
	e.fails(t, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "nope", "newText": "x"}}})
	e.fails(t, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** Update File: a.txt\n@@\n-nope\n+x\n*** End Patch"})
	msg := e.fails(t, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** Add File: z.txt\n+z\n*** End Patch"})
	contains(t, msg, "put back")
	e.dryRun(t, "write", map[string]any{"path": "c.txt", "content": "c"})
	contains(t, e.ok(t, "write", map[string]any{"path": "a.txt", "content": "a\n"}), "nothing was changed")
	if got := changes(t, j, "call_1"); len(got) != 0 {
		t.Errorf("recorded %+v", got)
	}
	if got := e.tree(t); len(got) != 2 || got["a.txt"] != "a\n" {
		t.Errorf("workspace %v", got)
	}
}

// brokenJournal records the first ok changes and fails on the others; it
// can drop a call's records (DeleteChanges).
type brokenJournal struct {
	undo.MemoryJournal
	ok      int32
	records atomic.Int32
}

func (b *brokenJournal) Record(ctx context.Context, id string, c tool.FileChange) error {
	if b.records.Add(1) > b.ok {
		return errors.New("database is locked")
	}
	return b.MemoryJournal.Record(ctx, id, c)
}

// recordOnly hides DeleteChanges: a journal that can only record.
type recordOnly struct{ j tool.Journal }

func (r recordOnly) Record(ctx context.Context, id string, c tool.FileChange) error {
	return r.j.Record(ctx, id, c)
}

// TestJournalFailureKeepsTheChange: the files stay written, the result
// says the change cannot be undone, and half a call is never left to undo.
func TestJournalFailureKeepsTheChange(t *testing.T) {
	t.Parallel()
	t.Run("write", func(t *testing.T) {
		t.Parallel()
		e := journaled(t, recordOnly{&brokenJournal{}}, nil)
		got := e.ok(t, "write", map[string]any{"path": "a.txt", "content": "a"})
		contains(t, got, "Wrote 1 bytes to a.txt (created it). Note: this change cannot be undone (recording it for undo failed).")
		if e.get(t, "a.txt") != "a" {
			t.Error("the file was not written")
		}
	})
	t.Run("patch", func(t *testing.T) {
		t.Parallel()
		j := &brokenJournal{ok: 1}
		e := journaled(t, j, nil)
		got := e.ok(t, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n*** End Patch"})
		contains(t, got, "cannot be undone")
		if e.get(t, "a.txt") != "a\n" || e.get(t, "b.txt") != "b\n" {
			t.Error("the files were not written")
		}
		if cs := changes(t, &j.MemoryJournal, "call_1"); len(cs) != 0 {
			t.Errorf("half the call is left to undo: %+v", cs)
		}
	})
}
