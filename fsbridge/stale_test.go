//go:build unix

package fsbridge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A temporary file left by an interrupted write is removed; one a writer
// still holds, one written a moment ago (its writer may not have locked it
// yet), a link of that name, a file outside the root reached through
// a directory link, and files of other names are left alone.
func TestRemoveStaleTemp(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	// Files of earlier runs, written an hour ago.
	earlier := time.Now().Add(-time.Hour)
	write := func(p, data string) string {
		t.Helper()
		ok(t, os.MkdirAll(filepath.Dir(p), 0o755))
		ok(t, os.WriteFile(p, []byte(data), 0o644))
		ok(t, os.Chtimes(p, earlier, earlier))
		return p
	}
	stale := write(filepath.Join(ws, "src", tempName("main.go")), "half a file")
	staleTop := write(filepath.Join(ws, tempName("notes.txt")), "")
	live := write(filepath.Join(ws, tempName("live.txt")), "being written")
	mine := write(filepath.Join(ws, ".main.go.toolbelt-notmine.tmp"), "not our pattern")
	other := write(filepath.Join(ws, "draft.tmp"), "a user's file")
	inGit := write(filepath.Join(ws, ".git", tempName("config")), "git's business")
	inData := write(filepath.Join(ws, "state", tempName("toolbelt.db")), "concealed")
	target := write(filepath.Join(outside, tempName("secret")), "outside the workspace")
	// A write that has just begun, its file not locked yet.
	fresh := filepath.Join(ws, tempName("fresh.txt"))
	ok(t, os.WriteFile(fresh, []byte("just created"), 0o644))
	ok(t, os.Symlink(outside, filepath.Join(ws, "elsewhere")))
	link := filepath.Join(ws, tempName("link"))
	ok(t, os.Symlink(target, link))

	// A writer in another process holds its temporary file locked.
	f, err := os.OpenFile(live, os.O_WRONLY, 0)
	ok(t, err)
	defer f.Close()
	lockTemp(f)

	l, err := OpenLocal(ws, Conceal(filepath.Join(ws, "state")))
	ok(t, err)
	defer l.Close()
	removed, err := l.RemoveStaleTemp(context.Background())
	ok(t, err)
	slices.Sort(removed)
	want := []string{filepath.Base(staleTop), "src/" + filepath.Base(stale)}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for _, p := range []string{stale, staleTop} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range []string{live, fresh, mine, other, inGit, inData, target, link} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	// Once the writer is gone, its file is stale too.
	ok(t, f.Close())
	removed, err = l.RemoveStaleTemp(context.Background())
	if err != nil || !slices.Equal(removed, []string{filepath.Base(live)}) {
		t.Errorf("after the writer ended: %q %v", removed, err)
	}
}

// A write in progress holds its temporary file locked until it is in place,
// so a cleaner in another process leaves it alone; the write itself leaves
// no temporary file behind.
func TestWriteLeavesNoTemp(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	l, err := OpenLocal(ws)
	ok(t, err)
	defer l.Close()
	ok(t, l.WriteFile(context.Background(), "a.txt", []byte("hello"), 0o644))
	entries, err := os.ReadDir(ws)
	ok(t, err)
	if len(entries) != 1 || entries[0].Name() != "a.txt" {
		t.Errorf("workspace holds %v", entries)
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
