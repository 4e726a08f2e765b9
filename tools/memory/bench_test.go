package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/memory"
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
// the tool does it, Search with a full scan of the files each time, the full
// scan alone, the indexed stamps read alone, and the index query alone. It reports the median (p50) and p90 per search.
func BenchmarkSearch10k(b *testing.B) {
	ctx := context.Background()
	ws := notes(b, 10000)
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
