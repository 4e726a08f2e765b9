package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tools/memory"
)

// eventually polls cond until it holds, failing after a generous deadline
// (it asserts no timing: only that the change shows at all).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen within 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With Watch, a file rewritten in place shows at the next search even
// within Rescan, where the stat-based check alone misses it.
func TestTheWatcherSeesInPlaceRewrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := t.TempDir()
	// Each indexer has a store of its own: they share the files only.
	idx := map[*memory.Indexer]*store.Memory{}
	watching := memory.NewIndexer(time.Hour)
	watching.Watch = true
	t.Cleanup(func() { watching.Close() })
	stat := memory.NewIndexer(time.Hour) // the same, without a watcher
	idx[watching], idx[stat] = openStore(t).Memory(), openStore(t).Memory()
	write(t, ws, "MEMORY.md", "alpha\n")
	write(t, ws, "memory/a.md", "bravo\n")
	hourAgo := time.Now().Add(-time.Hour)
	backdate(t, ws, hourAgo)
	found := func(ix *memory.Indexer, q string) bool {
		hits, err := ix.Search(ctx, idx[ix], ws, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits) == 1
	}
	for _, ix := range []*memory.Indexer{watching, stat} {
		if !found(ix, "alpha") || !found(ix, "bravo") {
			t.Fatal("first scan")
		}
	}
	// In place, same size; the directory's times do not change.
	write(t, ws, "memory/a.md", "delta\n")
	if err := os.Chtimes(filepath.Join(ws, "memory/a.md"), hourAgo.Add(time.Second), hourAgo.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a rewrite in place", func() bool { return found(watching, "delta") })
	if found(stat, "delta") {
		t.Fatal("the stat-based check saw an in-place rewrite within Rescan: this test no longer tells the watcher's work apart")
	}
	write(t, ws, "MEMORY.md", "gamma\n")
	eventually(t, "MEMORY.md rewritten", func() bool { return found(watching, "gamma") })
	// A directory made after the watch started is watched too.
	write(t, ws, "memory/sub/b.md", "echo\n")
	eventually(t, "a new file in a new directory", func() bool { return found(watching, "echo") })
	write(t, ws, "memory/sub/b.md", "foxtrot\n")
	eventually(t, "a rewrite in the new directory", func() bool { return found(watching, "foxtrot") })
	// After Close, searches go on with the stat-based check.
	if err := watching.Close(); err != nil {
		t.Fatal(err)
	}
	if !found(watching, "foxtrot") {
		t.Fatal("search after Close")
	}
}
