package fs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// intentEnv is an in-memory workspace whose changes the store's journal
// records, through the bridge wrap makes of it.
func intentEnv(t *testing.T, wrap func(fsbridge.Bridge) fsbridge.Bridge) (*env, *store.Store, *store.Journal) {
	t.Helper()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	j := st.Journal(store.JournalOptions{})
	return journaled(t, j, wrap), st, j
}

// watching is a bridge that runs before ahead of each write or removal.
type watching struct {
	fsbridge.Bridge
	before func(op, p string) error
}

func (w *watching) WriteFile(ctx context.Context, p string, data []byte, perm fs.FileMode) error {
	if err := w.before("write", p); err != nil {
		return err
	}
	return w.Bridge.WriteFile(ctx, p, data, perm)
}

func (w *watching) Remove(ctx context.Context, p string) error {
	if err := w.before("remove", p); err != nil {
		return err
	}
	return w.Bridge.Remove(ctx, p)
}

const threeFiles = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: b.txt\n+b\n*** Delete File: d.txt\n*** End Patch"

// TestIntentIsKeptBeforeTheFirstFile: every write and removal of write,
// edit and apply_patch happens while the call's intent — all its files —
// is in the store; once the call is done the intent is closed and its
// changes are the call's journal entry.
func TestIntentIsKeptBeforeTheFirstFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool  string
		args  map[string]any
		files int
	}{
		{"write", map[string]any{"path": "new.txt", "content": "n"}, 1},
		{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "a", "newText": "A"}}}, 1},
		{"apply_patch", map[string]any{"patch": threeFiles}, 3},
	} {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			var st *store.Store
			steps := 0
			e, st, j := intentEnv(t, func(b fsbridge.Bridge) fsbridge.Bridge {
				return &watching{Bridge: b, before: func(op, p string) error {
					steps++
					if n := storetest.Count(t, st, "file_intents"); n != 1 {
						t.Errorf("%s %s with %d intents kept", op, p, n)
					}
					if n := storetest.Count(t, st, "file_changes"); n != c.files {
						t.Errorf("%s %s with %d changes kept, want %d", op, p, n, c.files)
					}
					return nil
				}}
			})
			e.put(t, map[string]string{"a.txt": "a\n", "d.txt": "d\n"})
			e.ok(t, c.tool, c.args)
			if steps == 0 {
				t.Fatal("no file changed")
			}
			if n := storetest.Count(t, st, "file_intents"); n != 0 {
				t.Errorf("%d intents left after the call", n)
			}
			if got, err := j.Changes(context.Background(), "call_1"); err != nil || len(got) != c.files {
				t.Errorf("journal entry %+v, %v; want %d changes", got, err, c.files)
			}
		})
	}
}

// refusing is a journal that cannot keep intents (its store is full).
type refusing struct{ *store.Journal }

func (r refusing) Intend(context.Context, tool.Intent) error {
	return errors.New("database or disk is full")
}

// TestNoIntentNoChange: when the intent cannot be kept, no file changes
// and the model is told so, and what to do.
func TestNoIntentNoChange(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	e := journaled(t, refusing{st.Journal(store.JournalOptions{})}, nil)
	e.put(t, map[string]string{"a.txt": "a\n", "d.txt": "d\n"})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"write", map[string]any{"path": "new.txt", "content": "n"}},
		{"apply_patch", map[string]any{"patch": threeFiles}},
	} {
		msg := e.call(t, c.tool, c.args)
		var env tool.Envelope
		if len(msg.Content) == 0 || json.Unmarshal([]byte(msg.Content[0].Text), &env) != nil {
			t.Fatalf("%s: %+v, want an error envelope", c.tool, msg)
		}
		contains(t, env.Error, "No file was changed", "could not record this one")
		contains(t, env.Suggestion, "make room in its data directory")
		if !msg.IsError || env.CanRetry == nil || !*env.CanRetry {
			t.Errorf("%s: %+v, want an error the model may retry", c.tool, env)
		}
	}
	if tree := e.tree(t); len(tree) != 3 || tree["a.txt"] != "a\n" || tree["d.txt"] != "d\n" {
		t.Errorf("workspace %v", tree)
	}
}

// TestFailedChangeDropsItsIntent: a patch that fails at a file puts back
// the files it changed and leaves neither intent nor journal entry; one
// that cannot put them back (a full disk) says the change is left half
// made and leaves its intent for recovery, which settles it.
func TestFailedChangeDropsItsIntent(t *testing.T) {
	t.Parallel()
	t.Run("put back", func(t *testing.T) {
		t.Parallel()
		e, st, _ := intentEnv(t, func(b fsbridge.Bridge) fsbridge.Bridge { return &failingBridge{Bridge: b, failOn: "b.txt"} })
		e.put(t, map[string]string{"a.txt": "a\n", "d.txt": "d\n"})
		contains(t, e.fails(t, "apply_patch", map[string]any{"patch": threeFiles}), "put back")
		if n, m := storetest.Count(t, st, "file_intents"), storetest.Count(t, st, "file_changes"); n != 0 || m != 0 {
			t.Errorf("%d intents and %d changes left", n, m)
		}
		if got := e.get(t, "a.txt"); got != "a\n" {
			t.Errorf("a.txt = %q", got)
		}
	})
	t.Run("half made", func(t *testing.T) {
		t.Parallel()
		writes := 0
		e, st, j := intentEnv(t, func(b fsbridge.Bridge) fsbridge.Bridge {
			return &watching{Bridge: b, before: func(op, p string) error {
				if writes++; writes > 1 {
					return errors.New("no space left on device")
				}
				return nil
			}}
		})
		e.put(t, map[string]string{"a.txt": "a\n", "d.txt": "d\n"})
		contains(t, e.fails(t, "apply_patch", map[string]any{"patch": threeFiles}), "left half made", "rolled back when Toolbelt next starts")
		if n := storetest.Count(t, st, "file_intents"); n != 1 {
			t.Fatalf("%d intents left, want the half-made change's", n)
		}
		settled := 0
		if _, err := j.Recover(context.Background(), "", nil, func(context.Context, store.Interrupted) (bool, error) {
			settled++
			return false, nil
		}); err != nil || settled != 1 {
			t.Errorf("Recover settled %d: %v", settled, err)
		}
	})
}
