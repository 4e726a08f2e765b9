package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/memory"
)

// countingIndex is the store's index, counting the reads of every indexed
// file's stamp (what a full scan compares the files with).
type countingIndex struct {
	*store.Memory
	stamps atomic.Int64
}

func (c *countingIndex) Stamps(ctx context.Context, scope string) (map[string]string, error) {
	c.stamps.Add(1)
	return c.Memory.Stamps(ctx, scope)
}

var _ memory.Scans = (*countingIndex)(nil)

// freshSearch searches as a new process would: a new indexer over the
// same index.
func freshSearch(t *testing.T, idx memory.Index, ws, query string) []memory.Hit {
	t.Helper()
	hits, err := memory.NewIndexer(memory.DefaultRescan).Search(context.Background(), idx, ws, query, 5)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// A fresh process trusts the last full scan while the directories keep
// their stamps: no note is stat-ed or compared with the index (so a note
// rewritten in place is not seen, which a full scan sees), and a note
// added, removed or renamed in, and MEMORY.md changed, are seen.
func TestAFreshProcessTrustsTheRecordedScan(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	idx := &countingIndex{Memory: openStore(t).Memory()}
	write(t, ws, "MEMORY.md", "alpha\n")
	write(t, ws, "memory/a.md", "bravo\n")
	write(t, ws, "memory/sub/b.md", "charlie\n")
	old := time.Now().Add(-time.Hour)
	backdate(t, ws, old)
	if hits := freshSearch(t, idx, ws, "bravo"); len(hits) != 1 {
		t.Fatalf("first search: %+v", hits)
	}
	if n := idx.stamps.Load(); n != 1 {
		t.Fatalf("the first search read the stamps %d times", n)
	}
	// Unchanged: trusted without a look at the notes.
	if hits := freshSearch(t, idx, ws, "bravo"); len(hits) != 1 || idx.stamps.Load() != 1 {
		t.Fatalf("a fresh search looked at the notes: %+v, stamps read %d times", hits, idx.stamps.Load())
	}
	// Each change below is seen by a fresh process.
	for _, c := range []struct {
		name, query string
		change      func()
		want        int
	}{
		{"added", "delta", func() { write(t, ws, "memory/sub/d.md", "delta\n") }, 1},
		{"removed", "charlie", func() {
			if err := os.Remove(filepath.Join(ws, "memory/sub/b.md")); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"renamed in", "echo", func() {
			write(t, ws, "tmp.md", "echo\n")
			if err := os.Rename(filepath.Join(ws, "tmp.md"), filepath.Join(ws, "memory/a.md")); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"MEMORY.md in place", "foxtrot", func() { write(t, ws, "MEMORY.md", "foxtrot\n") }, 1},
		{"new directory", "golf", func() { write(t, ws, "memory/new/g.md", "golf\n") }, 1},
	} {
		c.change()
		if hits := freshSearch(t, idx, ws, c.query); len(hits) != c.want {
			t.Fatalf("%s: %d hits, want %d: %+v", c.name, len(hits), c.want, hits)
		}
		backdate(t, ws, old)
		freshSearch(t, idx, ws, "anything") // records a scan that is not racy
	}
	// A note rewritten in place leaves the directories' stamps alone: a
	// fresh search does not see it (it looks at no note), a full scan
	// (Rescan 0) does.
	write(t, ws, "memory/sub/d.md", "hotel\n")
	if err := os.Chtimes(filepath.Join(ws, "memory/sub/d.md"), old.Add(time.Second), old.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if hits := freshSearch(t, idx, ws, "hotel"); len(hits) != 0 {
		t.Fatalf("a fresh search stat-ed the notes: %+v", hits)
	}
	hits, err := memory.NewIndexer(0).Search(context.Background(), idx, ws, "hotel", 5)
	if err != nil || len(hits) != 1 {
		t.Fatalf("full scan: %v %+v", err, hits)
	}
}

// A change in the same clock tick as the recorded scan leaves the stamps
// as the scan saw them: a fresh process must not trust that record.
func TestAFreshProcessSeesAChangeInTheScansTick(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	idx := openStore(t).Memory()
	write(t, ws, "memory/a.md", "alpha\n")
	tick := time.Now().Truncate(time.Second)
	backdate(t, ws, tick)
	if hits := freshSearch(t, idx, ws, "alpha"); len(hits) != 1 {
		t.Fatalf("%+v", hits)
	}
	// Renamed in and in place, same sizes, all times put back to the tick.
	write(t, ws, "tmp.md", "bravo\n")
	if err := os.Rename(filepath.Join(ws, "tmp.md"), filepath.Join(ws, "memory", "a.md")); err != nil {
		t.Fatal(err)
	}
	backdate(t, ws, tick)
	if hits := freshSearch(t, idx, ws, "bravo"); len(hits) != 1 {
		t.Fatalf("renamed in within the scan's tick: %+v", hits)
	}
	write(t, ws, "memory/a.md", "delta\n")
	backdate(t, ws, tick)
	if hits := freshSearch(t, idx, ws, "delta"); len(hits) != 1 {
		t.Fatalf("written in place within the scan's tick: %+v", hits)
	}
}

// An index that keeps no scans works as before: each fresh process scans
// fully.
func TestAnIndexWithoutScans(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	idx := plainIndex{openStore(t).Memory()}
	write(t, ws, "memory/a.md", "alpha\n")
	backdate(t, ws, time.Now().Add(-time.Hour))
	if hits := freshSearch(t, idx, ws, "alpha"); len(hits) != 1 {
		t.Fatalf("%+v", hits)
	}
	write(t, ws, "memory/a.md", "bravo\n")
	if hits := freshSearch(t, idx, ws, "bravo"); len(hits) != 1 {
		t.Fatalf("%+v", hits)
	}
}

// plainIndex hides the store's Scans.
type plainIndex struct{ m *store.Memory }

func (p plainIndex) Stamps(ctx context.Context, scope string) (map[string]string, error) {
	return p.m.Stamps(ctx, scope)
}
func (p plainIndex) Update(ctx context.Context, scope string, files []tool.MemoryFile) error {
	return p.m.Update(ctx, scope, files)
}
func (p plainIndex) Search(ctx context.Context, scope, query string, limit int) ([]tool.MemoryHit, error) {
	return p.m.Search(ctx, scope, query, limit)
}

// A fresh process that watches (as toolbelt's do) trusts the recorded
// scan too, and its watch then sees a note rewritten in place.
func TestAFreshWatchingProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := t.TempDir()
	idx := &countingIndex{Memory: openStore(t).Memory()}
	write(t, ws, "memory/a.md", "alpha\n")
	hourAgo := time.Now().Add(-time.Hour)
	backdate(t, ws, hourAgo)
	freshSearch(t, idx, ws, "alpha")
	ix := memory.NewIndexer(time.Hour)
	ix.Watch = true
	t.Cleanup(func() { ix.Close() })
	found := func(q string) bool {
		hits, err := ix.Search(ctx, idx, ws, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits) == 1
	}
	if !found("alpha") || idx.stamps.Load() != 1 {
		t.Fatalf("the watching fresh process did not trust the record: stamps read %d times", idx.stamps.Load())
	}
	write(t, ws, "memory/a.md", "bravo\n")
	if err := os.Chtimes(filepath.Join(ws, "memory/a.md"), hourAgo.Add(time.Second), hourAgo.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a rewrite in place", func() bool { return found("bravo") })
}

// TestAForegroundCallDoesNotWatch: a search in a foreground call (a
// one-shot toolbelt call) starts no watch although Watch is set: a note
// rewritten in place after it shows at the next full scan, as without a
// watch; a search outside such a call watches again.
func TestAForegroundCallDoesNotWatch(t *testing.T) {
	t.Parallel()
	ctx := tool.WithForeground(context.Background())
	ws := t.TempDir()
	idx := openStore(t).Memory()
	write(t, ws, "memory/a.md", "alpha\n")
	hourAgo := time.Now().Add(-time.Hour)
	backdate(t, ws, hourAgo)
	ix := memory.NewIndexer(time.Hour)
	ix.Watch = true
	t.Cleanup(func() { ix.Close() })
	found := func(ctx context.Context, q string) bool {
		hits, err := ix.Search(ctx, idx, ws, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits) == 1
	}
	if !found(ctx, "alpha") {
		t.Fatal("alpha not found")
	}
	write(t, ws, "memory/a.md", "bravo\n")
	if err := os.Chtimes(filepath.Join(ws, "memory/a.md"), hourAgo.Add(time.Second), hourAgo.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// No watch saw the rewrite: the scan is trusted for an hour.
	time.Sleep(100 * time.Millisecond)
	if found(ctx, "bravo") || !found(ctx, "alpha") {
		t.Fatal("a foreground search watched the workspace")
	}
	// Outside a foreground call the watch starts (a full scan with it),
	// and sees the next rewrite.
	bg := context.Background()
	if !found(bg, "bravo") {
		t.Fatal("the full scan with the new watch missed the rewrite")
	}
	write(t, ws, "memory/a.md", "charlie\n")
	if err := os.Chtimes(filepath.Join(ws, "memory/a.md"), hourAgo.Add(2*time.Second), hourAgo.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a rewrite in place, watched", func() bool { return found(bg, "charlie") })
}
