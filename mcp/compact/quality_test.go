package compact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// query is one realistic request of testdata/queries.json and the tool that
// should answer it; Also lists tools that answer it as well.
type query struct {
	Query string   `json:"query"`
	Want  string   `json:"want"`
	Also  []string `json:"also"`
}

func loadQueries(tb testing.TB, file string) []query {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	var qs []query
	if err := json.Unmarshal(b, &qs); err != nil {
		tb.Fatal(err)
	}
	return qs
}

// plainWords is text as lowercase words separated by single spaces.
func plainWords(text string) string { return strings.Join(words(text), " ") }

// quality is how well a ranking answers the query set.
type quality struct {
	top1, top3, mrr float64
	misses          []string // queries whose tool is not in the top 3
}

func (q quality) String() string {
	return fmt.Sprintf("top-1 %5.1f%%  top-3 %5.1f%%  MRR %.3f", 100*q.top1, 100*q.top3, q.mrr)
}

// measure runs every query against ix. A query counts as answered at the
// rank of the first acceptable tool within the first 20 hits.
func measure(ix *Index, qs []query) quality {
	var q quality
	for _, qq := range qs {
		ok := append([]string{qq.Want}, qq.Also...)
		rank := 0
		hits := ix.Search(qq.Query, MaxLimit)
		for i, h := range hits {
			if slices.Contains(ok, h.Name) {
				rank = i + 1
				break
			}
		}
		if rank == 1 {
			q.top1++
		}
		if rank >= 1 && rank <= 3 {
			q.top3++
		} else {
			var got []string
			for _, h := range hits[:min(3, len(hits))] {
				got = append(got, h.Name)
			}
			q.misses = append(q.misses, fmt.Sprintf("%q: want %s (rank %d), got %s", qq.Query, qq.Want, rank, strings.Join(got, ", ")))
		}
		if rank > 0 {
			q.mrr += 1 / float64(rank)
		}
	}
	n := float64(max(len(qs), 1))
	q.top1, q.top3, q.mrr = q.top1/n, q.top3/n, q.mrr/n
	return q
}

// TestSearchQuality measures the search on the query set over the core
// tools and every corpus tool, and requires the right tool in the top 3 for
// at least 90% of queries. It also measures what each part of the analysis
// and the field weights are worth, by turning them off one at a time.
func TestSearchQuality(t *testing.T) {
	t.Parallel()
	qs, holdout := loadQueries(t, "queries.json"), loadQueries(t, "queries_holdout.json")
	all := offered(t, fullRunner(t))
	if len(qs) < 120 {
		t.Fatalf("the query set has %d queries; it needs at least 120", len(qs))
	}
	names := map[string]bool{}
	for _, tt := range all {
		names[tt.Name] = true
	}
	for _, q := range slices.Concat(qs, holdout) {
		for _, n := range append([]string{q.Want}, q.Also...) {
			if !names[n] {
				t.Fatalf("query %q names %q, which is not a tool", q.Query, n)
			}
		}
	}

	// Queries say what is wanted in their own words; none is a tool's
	// description, or the first sentence of one.
	for _, q := range slices.Concat(qs, holdout) {
		for _, tt := range all {
			if d := plainWords(q.Query); d == plainWords(tt.Description) || d == plainWords(firstSentence(tt.Description)) {
				t.Errorf("query %q copies the description of %s", q.Query, tt.Name)
			}
		}
	}

	ix := NewIndex(all)
	got, held := measure(ix, qs), measure(ix, holdout)
	t.Logf("%d queries over %d tools: %v", len(qs), len(all), got)
	for _, m := range got.misses {
		t.Logf("  not in the top 3: %s", m)
	}
	t.Logf("%d held-out queries, not used for tuning: %v", len(holdout), held)
	for _, m := range held.misses {
		t.Logf("  not in the top 3: %s", m)
	}
	if got.top3 < 0.90 {
		t.Errorf("the right tool is in the top 3 for %.1f%% of queries; want at least 90%%", 100*got.top3)
	}

	uniform := defaultConfig
	for f := range numFields {
		uniform.fields[f] = fieldWeight{1, 0.75}
	}
	variants := []struct {
		name string
		edit func(*config)
	}{
		{"no synonyms", func(c *config) { c.analyzer.synonyms = false }},
		{"no stemming", func(c *config) { c.analyzer.stem = false }},
		{"no stop words", func(c *config) { c.analyzer.stop = false }},
		{"numbers kept", func(c *config) { c.analyzer.numbers = true }},
		{"plain words only", func(c *config) { c.analyzer = analyzer{numbers: true} }},
		{"uniform field weights", func(c *config) { c.fields = uniform.fields }},
		{"no parameter fields", func(c *config) { c.fields[fieldParams].weight, c.fields[fieldParamDesc].weight = 0, 0 }},
	}
	for _, v := range variants {
		cfg := defaultConfig
		v.edit(&cfg)
		vix := newIndex(all, cfg)
		t.Logf("  %-22s %v | held out: %v", v.name+":", measure(vix, qs), measure(vix, holdout))
	}
}

// BenchmarkSearch measures one query against the core tools and the corpus.
func BenchmarkSearch(b *testing.B) {
	ix := NewIndex(offered(b, fullRunner(b)))
	qs := loadQueries(b, "queries.json")
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Search(qs[i%len(qs)].Query, DefaultLimit)
	}
}

// BenchmarkIndex measures building the index over the core tools and the
// corpus, as Refresh does.
func BenchmarkIndex(b *testing.B) {
	all := offered(b, fullRunner(b))
	for b.Loop() {
		NewIndex(all)
	}
}
