package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/memory/embedtest"
)

// notes writes n generated notes (memory/note-NNNNN.md, a few sections of
// words drawn from a vocabulary of 5,000) into a new workspace.
func notes(b *testing.B, n int) string {
	b.Helper()
	ws := b.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "memory"), 0o755); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string { return vocabWord(int(vocabSize * r.Float64() * r.Float64())) } // skewed: some words common
	for i := range n {
		var sb strings.Builder
		for s := range 3 {
			fmt.Fprintf(&sb, "## Section %d %s %s\n", s, word(), word())
			for range 4 {
				for range 12 {
					sb.WriteString(word() + " ")
				}
				sb.WriteString("\n")
			}
			sb.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(ws, "memory", fmt.Sprintf("note-%05d.md", i)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

const vocabSize = 5000

func vocabWord(i int) string { return fmt.Sprintf("w%x%c", i, 'a'+rune(i%26)) }

// BenchmarkSearch10k measures memory_search over 10,000 notes: Search as
// the tool does it, Search as a fresh process does it (a new Indexer),
// Search with a full scan of the files each time, the full
// scan alone, the indexed stamps read alone, and the index query alone. It reports the median (p50) and p90 per search.
func BenchmarkSearch10k(b *testing.B) {
	ctx := context.Background()
	ws := notes(b, 10000)
	// Notes older than the racy window, as a memory's notes mostly are.
	hourAgo := time.Now().Add(-time.Hour)
	if err := filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, hourAgo, hourAgo)
	}); err != nil {
		b.Fatal(err)
	}
	idx := openStore(b).Memory()
	start := time.Now()
	if err := memory.NewIndexer(0).Sync(ctx, idx, ws); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexing 10,000 notes took %v", time.Since(start).Round(time.Millisecond))
	// search is what memory_search does (a full scan trusted for
	// DefaultRescan); fullscan scans every file each time.
	searcher, full := memory.NewIndexer(memory.DefaultRescan), memory.NewIndexer(0)
	var queries []string
	for _, q := range [][]int{{3, 17}, {100, 900, 2500}, {40}, {1200, 7, 4000, 333}, {4999, 60}} {
		var ws []string
		for _, i := range q {
			ws = append(ws, vocabWord(i))
		}
		queries = append(queries, strings.Join(ws, " "))
	}
	for _, c := range []struct {
		name   string
		search func(q string) ([]tool.MemoryHit, error)
	}{
		{"search", func(q string) ([]tool.MemoryHit, error) {
			hits, err := searcher.Search(ctx, idx, ws, q, 6)
			return make([]tool.MemoryHit, len(hits)), err
		}},
		{"fresh-process", func(q string) ([]tool.MemoryHit, error) {
			hits, err := memory.NewIndexer(memory.DefaultRescan).Search(ctx, idx, ws, q, 6)
			return make([]tool.MemoryHit, len(hits)), err
		}},
		{"fullscan+query", func(q string) ([]tool.MemoryHit, error) {
			hits, err := full.Search(ctx, idx, ws, q, 6)
			return make([]tool.MemoryHit, len(hits)), err
		}},
		{"fullscan", func(q string) ([]tool.MemoryHit, error) {
			return make([]tool.MemoryHit, 1), full.Sync(ctx, idx, ws)
		}},
		{"stamps", func(q string) ([]tool.MemoryHit, error) {
			st, err := idx.Stamps(ctx, ws)
			return make([]tool.MemoryHit, len(st)), err
		}},
		{"query", func(q string) ([]tool.MemoryHit, error) { return idx.Search(ctx, ws, q, 6) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var times []time.Duration
			i := 0
			for b.Loop() {
				t0 := time.Now()
				hits, err := c.search(queries[i%len(queries)])
				times = append(times, time.Since(t0))
				if err != nil || len(hits) == 0 {
					b.Fatalf("%q: %v, %d hits", queries[i%len(queries)], err, len(hits))
				}
				i++
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

// corpusIn10k writes a workspace of 10,000 notes: the shipped corpus (30
// notes) and 9,970 distractor notes whose words follow Zipf's law over a
// vocabulary of 20,000 words, the corpus's own words (about 1,100) put at
// random ranks among made-up ones: as in real notes, some of the queries'
// words are common and most are rarer, and every one of them is in
// distractors too.
func corpusIn10k(b *testing.B) string {
	b.Helper()
	ws := b.TempDir()
	if err := os.CopyFS(ws, os.DirFS("testdata/corpus")); err != nil {
		b.Fatal(err)
	}
	seen := map[string]bool{}
	var vocab []string
	err := filepath.WalkDir("testdata/corpus", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		for _, w := range strings.FieldsFunc(string(data), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if w = strings.ToLower(w); !seen[w] {
				seen[w] = true
				vocab = append(vocab, w)
			}
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	ranks := make([]string, 20000)
	for i := range ranks {
		ranks[i] = vocabWord(i)
	}
	for i, p := range r.Perm(len(ranks))[:len(vocab)] {
		ranks[p] = vocab[i]
	}
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(ranks)-1))
	word := func() string { return ranks[zipf.Uint64()] }
	for i := range 10000 - 30 {
		var sb strings.Builder
		for s := range 3 {
			fmt.Fprintf(&sb, "## %s %s %d\n", word(), word(), s)
			for range 4 {
				for range 12 {
					sb.WriteString(word() + " ")
				}
				sb.WriteString("\n")
			}
			sb.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(ws, "memory", fmt.Sprintf("gen-%05d.md", i)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkCorpusIn10k measures memory_search by keywords and hybrid (with
// the test embedding model served on 127.0.0.1) over 10,000 notes: the
// shipped corpus among 9,970 distractors made of its words. It reports
// the top-3 hit rate of the shipped questions (hit3-%) and the latency of
// a search as the tool runs it (p50, p90), each query made unique so that
// the query vector is never cached, and the CPU time of the process per
// search (all threads, the embedding server's included), which a busy
// machine inflates less than the latency.
func BenchmarkCorpusIn10k(b *testing.B) {
	ctx := context.Background()
	ws := corpusIn10k(b)
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), store.DefaultFile))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	idx := st.Memory()
	var queries []struct{ Query, File string }
	data, err := os.ReadFile("testdata/queries.json")
	if err != nil || json.Unmarshal(data, &queries) != nil {
		b.Fatal(err)
	}
	srv := embedtest.Start()
	defer srv.Close()
	for _, mode := range []string{"keyword", "hybrid"} {
		cfg := memory.Config{}
		if mode == "hybrid" {
			cfg = memory.Config{Embeddings: memory.Embeddings{Provider: "openai", BaseURL: srv.URL + "/v1", APIKeyEnv: "-"}}
		}
		ix := memory.NewIndexer(memory.DefaultRescan)
		start := time.Now()
		if _, err := ix.Find(ctx, idx, ws, "warm up", 3, cfg); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: indexing (and embedding) 10,000 notes took %v", mode, time.Since(start).Round(time.Millisecond))
		found := 0
		for _, q := range queries {
			res, err := ix.Find(ctx, idx, ws, q.Query, 3, cfg)
			if err != nil || res.Mode != mode {
				b.Fatalf("%v %+v", err, res)
			}
			for _, h := range res.Hits {
				if h.Path == q.File {
					found++
					break
				}
			}
		}
		b.Run(mode, func(b *testing.B) {
			var times []time.Duration
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				q := fmt.Sprintf("%s n%d", queries[i%len(queries)].Query, i)
				t0 := time.Now()
				res, err := ix.Find(ctx, idx, ws, q, 6, cfg)
				times = append(times, time.Since(t0))
				if err != nil || res.Mode != mode || len(res.Hits) == 0 {
					b.Fatalf("%q: %v %+v", q, err, res)
				}
				i++
			}
			cpu := cpuTime() - cpu0
			slices.Sort(times)
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(times)), "cpu-ms/op")
			b.ReportMetric(100*float64(found)/float64(len(queries)), "hit3-%")
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

// cpuTime is the CPU time the process used so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
