package memory_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/memory/embedtest"
)

// openStore opens a real SQLite store in a temp dir.
func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// The store's memory index is the one the tools use, with hybrid search.
var (
	_ memory.Index   = (*store.Memory)(nil)
	_ memory.Vectors = (*store.Memory)(nil)
)

// memoryContext returns a context in the workspace ws whose memory index
// is idx, with the memory settings settings (none when nil).
func memoryContext(ws string, idx memory.Index, settings any) *tool.Context {
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws}}
	if settings != nil {
		tc.Config = tool.Config{"memory": settings}
	}
	memory.IndexService.Set(tc, idx)
	return tc
}

// copyCorpus copies testdata/corpus into a new workspace.
func copyCorpus(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS("testdata/corpus")); err != nil {
		t.Fatal(err)
	}
	return ws
}

// The expected file is in the top 3 for at least 90% of the shipped
// questions, by keywords and hybrid (with the test embedding model), and
// hybrid does no worse than keywords.
func TestTop3HitRateOnTheCorpus(t *testing.T) {
	t.Parallel()
	ws := copyCorpus(t)
	idx := openStore(t).Memory()
	var queries []struct{ Query, File string }
	data, err := os.ReadFile("testdata/queries.json")
	if err != nil || json.Unmarshal(data, &queries) != nil || len(queries) < 30 {
		t.Fatalf("queries: %v (%d)", err, len(queries))
	}
	srv := embedtest.Start()
	defer srv.Close()
	rates := map[string]float64{}
	for _, mode := range []string{"keyword", "hybrid"} {
		cfg := memory.Config{}
		if mode == "hybrid" {
			cfg = hybridConfig(srv)
		}
		ix := memory.NewIndexer(0)
		found := 0
		for _, q := range queries {
			res, err := ix.Find(context.Background(), idx, ws, q.Query, 3, cfg)
			if err != nil || res.Mode != mode {
				t.Fatalf("%v %+v", err, res)
			}
			ok := false
			for _, h := range res.Hits {
				ok = ok || h.Path == q.File
			}
			if ok {
				found++
			} else {
				t.Logf("%s miss: %q wants %s, got %v", mode, q.Query, q.File, paths(res.Hits))
			}
		}
		rates[mode] = float64(found) / float64(len(queries))
		t.Logf("%s top-3 hit rate: %d/%d = %.1f%%", mode, found, len(queries), 100*rates[mode])
		if rates[mode] < 0.9 {
			t.Errorf("%s top-3 hit rate %.1f%% is under 90%%", mode, 100*rates[mode])
		}
	}
	if rates["hybrid"] < rates["keyword"] {
		t.Errorf("hybrid hit rate %.1f%% is under the keyword one, %.1f%%", 100*rates["hybrid"], 100*rates["keyword"])
	}
}

func write(t *testing.T, ws, p, text string) {
	t.Helper()
	full := filepath.Join(ws, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(hits []memory.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func TestTheIndexFollowsFileChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := t.TempDir()
	idx := openStore(t).Memory()
	ix := memory.NewIndexer(0)
	write(t, ws, "MEMORY.md", "# Pets\nThe cat is called Miso.\n")
	write(t, ws, "memory/a.md", "# Garden\nTomatoes planted in April.\n")
	write(t, ws, "notes/other.md", "Miso Miso Miso tomatoes\n")        // not memory
	write(t, ws, "memory/readme.txt", "Miso tomatoes, not markdown\n") // not .md
	hits, err := ix.Search(ctx, idx, ws, "Miso", 5)
	if err != nil || len(hits) != 1 || hits[0].Path != "MEMORY.md" || hits[0].StartLine != 1 || hits[0].EndLine != 2 || !strings.Contains(hits[0].Snippet, "Miso") {
		t.Fatalf("%v %+v", err, hits)
	}
	// Changed in place (another size), added, and removed files.
	write(t, ws, "MEMORY.md", "# Pets\nThe cat is called Tofu now.\n")
	write(t, ws, "memory/sub/b.md", "# Later\n\nMiso moved to the neighbours.\n")
	if err := os.Remove(filepath.Join(ws, "memory/a.md")); err != nil {
		t.Fatal(err)
	}
	hits, _ = ix.Search(ctx, idx, ws, "Miso", 5)
	if got := paths(hits); len(got) != 1 || got[0] != "memory/sub/b.md" {
		t.Fatalf("after changes: %+v", hits)
	}
	if hits, _ = ix.Search(ctx, idx, ws, "tofu", 5); len(hits) != 1 || hits[0].Path != "MEMORY.md" {
		t.Fatalf("changed file: %+v", hits)
	}
	if hits, _ = ix.Search(ctx, idx, ws, "tomatoes", 5); len(hits) != 0 {
		t.Fatalf("removed file still found: %+v", hits)
	}
	// Same size, new modification time.
	write(t, ws, "MEMORY.md", "# Pets\nThe cat is called Soba now.\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(ws, "MEMORY.md"), later, later); err != nil {
		t.Fatal(err)
	}
	if hits, _ = ix.Search(ctx, idx, ws, "soba", 5); len(hits) != 1 {
		t.Fatalf("same-size change missed: %+v", hits)
	}
	// A link out of the workspace is not followed.
	outside := t.TempDir()
	write(t, outside, "secret.md", "Miso secret\n")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws, "memory", "link.md")); err != nil {
		t.Fatal(err)
	}
	if hits, _ = ix.Search(ctx, idx, ws, "secret", 5); len(hits) != 0 {
		t.Fatalf("followed a link out: %+v", hits)
	}
	// No memory at all is no error.
	if hits, err := ix.Search(ctx, idx, t.TempDir(), "anything", 5); err != nil || len(hits) != 0 {
		t.Fatalf("empty workspace: %v %+v", err, hits)
	}
}

func TestWithinRescanOnlyDirectoryChangesShow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := t.TempDir()
	idx := openStore(t).Memory()
	ix := memory.NewIndexer(time.Hour)
	write(t, ws, "memory/a.md", "alpha\n")
	if hits, err := ix.Search(ctx, idx, ws, "alpha", 5); err != nil || len(hits) != 1 {
		t.Fatalf("%v %+v", err, hits)
	}
	// A file replaced by a rename (as the file tools write) shows at once.
	write(t, ws, "tmp.md", "bravo\n")
	if err := os.Rename(filepath.Join(ws, "tmp.md"), filepath.Join(ws, "memory", "a.md")); err != nil {
		t.Fatal(err)
	}
	if hits, _ := ix.Search(ctx, idx, ws, "bravo", 5); len(hits) != 1 {
		t.Fatalf("renamed-in file not seen: %+v", hits)
	}
	// A new file in a new subdirectory, and MEMORY.md written in place.
	write(t, ws, "memory/sub/c.md", "charlie\n")
	write(t, ws, "MEMORY.md", "delta\n")
	if hits, _ := ix.Search(ctx, idx, ws, "charlie delta", 5); len(hits) != 2 {
		t.Fatalf("new files not seen: %+v", hits)
	}
	write(t, ws, "memory/sub/d.md", "echo\n")
	if hits, _ := ix.Search(ctx, idx, ws, "echo", 5); len(hits) != 1 {
		t.Fatalf("file in subdirectory not seen: %+v", hits)
	}
	// Once the files are older than the file system's clock can blur, a
	// file rewritten in place waits for the next full scan.
	hourAgo := time.Now().Add(-time.Hour)
	backdate(t, ws, hourAgo)
	ix.Rescan = 0
	if hits, _ := ix.Search(ctx, idx, ws, "echo", 5); len(hits) != 1 {
		t.Fatalf("full scan: %+v", hits)
	}
	ix.Rescan = time.Hour
	write(t, ws, "memory/a.md", "foxtrot\n")
	if err := os.Chtimes(filepath.Join(ws, "memory", "a.md"), hourAgo.Add(time.Second), hourAgo.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if hits, _ := ix.Search(ctx, idx, ws, "foxtrot", 5); len(hits) != 0 {
		t.Fatalf("in-place rewrite seen within Rescan: %+v", hits)
	}
	ix.Rescan = 0
	if hits, _ := ix.Search(ctx, idx, ws, "foxtrot", 5); len(hits) != 1 {
		t.Fatalf("full scan missed the rewrite: %+v", hits)
	}
}

// A change in the same clock tick as a scan leaves size and times as the
// scan saw them; the next search must still see it.
func TestChangeInTheScansClockTickShows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := t.TempDir()
	idx := openStore(t).Memory()
	ix := memory.NewIndexer(time.Hour)
	write(t, ws, "memory/a.md", "alpha\n")
	tick := time.Now().Truncate(time.Second)
	backdate(t, ws, tick)
	if hits, err := ix.Search(ctx, idx, ws, "alpha", 5); err != nil || len(hits) != 1 {
		t.Fatalf("%v %+v", err, hits)
	}
	// Same size, renamed in, and every time put back to the same tick, as
	// a coarse clock would leave them.
	write(t, ws, "tmp.md", "bravo\n")
	if err := os.Rename(filepath.Join(ws, "tmp.md"), filepath.Join(ws, "memory", "a.md")); err != nil {
		t.Fatal(err)
	}
	backdate(t, ws, tick)
	if hits, _ := ix.Search(ctx, idx, ws, "bravo", 5); len(hits) != 1 {
		t.Fatalf("change in the scan's tick not seen: %+v", hits)
	}
	// In place, same size, same tick, and MEMORY.md too.
	write(t, ws, "memory/a.md", "delta\n")
	write(t, ws, "MEMORY.md", "charlie\n")
	backdate(t, ws, tick)
	if hits, _ := ix.Search(ctx, idx, ws, "charlie delta", 5); len(hits) != 2 {
		t.Fatalf("in-place change in the scan's tick not seen: %+v", hits)
	}
}

// backdate sets the times of everything under ws to at.
func backdate(t *testing.T, ws string, at time.Time) {
	t.Helper()
	err := filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestChunksFollowHeadingsAndLength(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("intro line\n# First\none\ntwo\n## Second part\n")
	for i := range 50 {
		b.WriteString("line\n")
		if i == 20 {
			b.WriteString("\n")
		}
	}
	cs := memory.Chunks("memory/my-notes.md", b.String())
	if len(cs) < 4 {
		t.Fatalf("%d chunks: %+v", len(cs), cs)
	}
	if cs[0].StartLine != 1 || cs[0].EndLine != 1 || cs[0].Title != "my notes" {
		t.Errorf("first %+v", cs[0])
	}
	if cs[1].StartLine != 2 || cs[1].EndLine != 4 || cs[1].Title != "my notes First" || !strings.HasPrefix(cs[1].Text, "# First") {
		t.Errorf("second %+v", cs[1])
	}
	for _, c := range cs[2:] {
		if c.Title != "my notes Second part" || c.EndLine-c.StartLine+1 > 40 {
			t.Errorf("chunk %+v", c)
		}
	}
	if last := cs[len(cs)-1]; last.EndLine != 56 {
		t.Errorf("last chunk ends at %d, want 56", last.EndLine)
	}
}

func newRunner(t *testing.T, tc *tool.Context) *invoke.Runner {
	t.Helper()
	reg := registry.New()
	if err := memory.Register(reg, nil); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, tc)
}

func run(r *invoke.Runner, name, args string) tool.ResultMessage {
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func TestMemoryToolsThroughThePipeline(t *testing.T) {
	t.Parallel()
	ws := copyCorpus(t)
	write(t, ws, "src/secret.md", "not memory\n")
	r := newRunner(t, memoryContext(ws, openStore(t).Memory(), nil))

	msg := run(r, "memory_search", `{"query":"dentist appointment","maxResults":2}`)
	if msg.IsError || !strings.HasPrefix(msg.Content[0].Text, "memory/dentist.md:1-") {
		t.Fatalf("%+v", msg)
	}
	details, _ := json.Marshal(msg.Details)
	var d struct{ Results []memory.Hit }
	if json.Unmarshal(details, &d) != nil || len(d.Results) == 0 || len(d.Results) > 2 || d.Results[0].Path != "memory/dentist.md" || d.Results[0].Score <= 0 {
		t.Fatalf("details %s", details)
	}
	if msg := run(r, "memory_search", `{"query":"xylophone"}`); msg.IsError || !strings.Contains(msg.Content[0].Text, "No memory matches") {
		t.Fatalf("%+v", msg)
	}

	msg = run(r, "memory_get", `{"path":"memory/dentist.md","from":3,"lines":1}`)
	if msg.IsError || msg.Content[0].Text != "Check-up with Dr. Ferreira booked for 14 April at 16:30. Bring the insurance card." {
		t.Fatalf("%+v", msg)
	}
	if msg := run(r, "memory_get", `{"path":"./MEMORY.md"}`); msg.IsError || !strings.HasPrefix(msg.Content[0].Text, "# Long-term memory\n") || !strings.HasSuffix(msg.Content[0].Text, "open a pull request.") {
		t.Fatalf("%+v", msg)
	}
	for _, c := range []struct{ path, want string }{
		{"src/secret.md", "reads only memory files"},
		{"../MEMORY.md", "reads only memory files"},
		{"memory/../src/secret.md", "reads only memory files"},
		{"/etc/passwd", "reads only memory files"},
		{"memory/notes.txt", "reads only memory files"},
		{"memory/absent.md", "There is no memory file memory/absent.md"},
	} {
		msg := run(r, "memory_get", `{"path":"`+c.path+`"}`)
		if !msg.IsError || !strings.Contains(msg.Content[0].Text, c.want) {
			t.Errorf("%s: %+v", c.path, msg)
		}
	}
	if msg := run(r, "memory_get", `{"path":"memory/dentist.md","from":99}`); !msg.IsError || !strings.Contains(msg.Content[0].Text, "past the end: memory/dentist.md has 4 lines") {
		t.Errorf("%+v", msg)
	}
}

func TestMemoryToolsSayWhyTheyAreUnavailable(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := memory.Register(reg, nil); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	reg.ResolveAll(&tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, func(id string, err error) { reasons[id] = err.Error() })
	if !strings.Contains(reasons["memory_search"], "no memory index") {
		t.Errorf("memory_search: %q", reasons["memory_search"])
	}
	if _, ok := reasons["memory_get"]; ok {
		t.Errorf("memory_get needs no index: %q", reasons["memory_get"])
	}
	reasons = map[string]string{}
	reg.ResolveAll(&tool.Context{}, func(id string, err error) { reasons[id] = err.Error() })
	if !strings.Contains(reasons["memory_get"], "no workspace") {
		t.Errorf("memory_get: %q", reasons["memory_get"])
	}
}

// TestMemoryHardLinks: a memory file with several hard links (another may
// be a file outside the workspace) is neither indexed nor read — with the
// tool context's file bridge, or without one — and memory_search says it
// left it out; a bridge that allows hard links (fsbridge.AllowHardLinks)
// lets the memory tools read it too.
func TestMemoryHardLinks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		bridge  func(t *testing.T, ws string) fsbridge.Bridge
		allowed bool
	}{
		{"no bridge", func(*testing.T, string) fsbridge.Bridge { return nil }, false},
		{"bridge", func(t *testing.T, ws string) fsbridge.Bridge { return openBridge(t, ws) }, false},
		{"bridge allowing hard links", func(t *testing.T, ws string) fsbridge.Bridge { return openBridge(t, ws, fsbridge.AllowHardLinks()) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			write(t, ws, "memory/plain.md", "Miso lives here.\n")
			secret := filepath.Join(t.TempDir(), "secret.md")
			if err := os.WriteFile(secret, []byte("Miso TOPSECRET\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(secret, filepath.Join(ws, "memory", "hard.md")); err != nil {
				t.Skipf("cannot make a hard link here: %v", err)
			}
			tc := memoryContext(ws, openStore(t).Memory(), nil)
			if b := c.bridge(t, ws); b != nil {
				tc.FSRoot, tc.FS = ws, b
			}
			r := newRunner(t, tc)
			search := run(r, "memory_search", `{"query":"Miso"}`)
			get := run(r, "memory_get", `{"path":"memory/hard.md"}`)
			if c.allowed {
				if !strings.Contains(search.Content[0].Text, "TOPSECRET") || !strings.Contains(get.Content[0].Text, "TOPSECRET") {
					t.Errorf("hard links allowed, the file is not read:\n%s\n%s", search.Content[0].Text, get.Content[0].Text)
				}
				return
			}
			if s := search.Content[0].Text; search.IsError || strings.Contains(s, "TOPSECRET") || !strings.Contains(s, "memory/plain.md") ||
				!strings.Contains(s, `[Not searched: memory/hard.md: refused to read "memory/hard.md": the file has 2 hard links`) {
				t.Errorf("memory_search:\n%s", s)
			}
			if g := get.Content[0].Text; !get.IsError || strings.Contains(g, "TOPSECRET") || !strings.Contains(g, "2 hard links") {
				t.Errorf("memory_get: %s", g)
			}
		})
	}
}

// openBridge opens a file bridge over ws, closed when the test ends.
func openBridge(t *testing.T, ws string, opts ...fsbridge.Option) fsbridge.Bridge {
	t.Helper()
	b, err := fsbridge.OpenLocal(ws, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
