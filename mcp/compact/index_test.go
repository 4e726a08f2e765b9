package compact

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/tool"
)

func TestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"github__create_pull_request", []string{"github", "create", "pull", "request"}},
		{"get-annotated-message", []string{"get", "annotated", "message"}},
		{"pageId includeSnapshot", []string{"page", "id", "include", "snapshot"}},
		{"HTTPServer parseURL", []string{"http", "server", "parse", "url"}},
		{"open PRs and URLs", []string{"open", "prs", "and", "urls"}},
		{"utf8 3G h2", []string{"utf8", "3", "g", "h2"}},
		{"Größe ändern, Ünïcode!", []string{"größe", "ändern", "ünïcode"}},
		{"  ", nil},
	}
	for _, tc := range tests {
		if got := words(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	// Each group stems to one term; different groups to different terms.
	groups := [][]string{
		{"create", "creates", "creating", "created", "creation"},
		{"directory", "directories"},
		{"entity", "entities"},
		{"file", "files"},
		{"run", "running", "runs"},
		{"fill", "filled", "filling", "fills"},
		{"navigate", "navigating", "navigation"},
		{"patch", "patches"},
		{"status"},
		{"process", "processes"},
	}
	seen := map[string]string{}
	for _, g := range groups {
		want := stem(g[0])
		for _, w := range g {
			if got := stem(w); got != want {
				t.Errorf("stem(%q) = %q, want %q like %q", w, got, want, g[0])
			}
		}
		if other, dup := seen[want]; dup {
			t.Errorf("%q and %q both stem to %q", g[0], other, want)
		}
		seen[want] = g[0]
	}
	for _, w := range []string{"ls", "go", "js", "user", "string", "thing", "naïve", "x2"} {
		if got := stem(w); got != w {
			t.Errorf("stem(%q) = %q, want it unchanged", w, got)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	t.Parallel()
	syn := defaultAnalyzer.synonymTable()
	got := map[string]float64{}
	for _, wt := range defaultAnalyzer.query("Open the folders of my repo", syn) {
		got[wt.term] = wt.weight
	}
	want := map[string]float64{
		"open": 1, "~open": 1, "folders": 1, "~folder": 1, "repo": 1, "~repo": 1,
		"directory": synonymWeight, "~directory": synonymWeight, "repository": synonymWeight, "~repository": synonymWeight,
	}
	for term, w := range want {
		if got[term] != w {
			t.Errorf("term %q has weight %v, want %v (all: %v)", term, got[term], w, got)
		}
	}
	for _, stop := range []string{"the", "of", "my"} {
		if _, ok := got[stop]; ok {
			t.Errorf("stop word %q kept", stop)
		}
	}
	// A phrase shares its weight among its words.
	for _, wt := range defaultAnalyzer.query("merge my PR", syn) {
		if wt.term == "pull" && wt.weight != synonymWeight/2 {
			t.Errorf("pull from PR has weight %v", wt.weight)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 40) + "end."
	tests := []struct{ in, want string }{
		{"Read a file. Then more.", "Read a file."},
		{"  Scrape content from a single URL.\n\n**Best for:** pages", "Scrape content from a single URL."},
		{"\n\n## Heading\nText", "Heading"},
		{"**Bold start** here. Next.", "Bold start here."},
		{"Press a key (e.g. Enter) to submit. Next.", "Press a key (e.g. Enter) to submit."},
		{"Version 1.2.3 is supported. Next.", "Version 1.2.3 is supported."},
		{"No period at all", "No period at all"},
		{`Find files matching a glob, such as "src/**/*_test.ts". More.`, `Find files matching a glob, such as "src/**/*_test.ts".`},
		{"- a list item. More", "a list item."},
		{"Wait? Yes.", "Wait?"},
		{"", ""},
		{long, strings.TrimSpace(strings.Repeat("word ", 23)) + "…"},
	}
	for _, tc := range tests {
		got := OneLine(tc.in)
		if got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if utf8.RuneCountInString(got) > MaxLineChars {
			t.Errorf("OneLine(%q) has %d characters", tc.in, utf8.RuneCountInString(got))
		}
	}
}

func TestIndexLookupAndClosest(t *testing.T) {
	t.Parallel()
	ix := NewIndex(corpusTools(t))
	for _, name := range []string{"github__create_issue", "GITHUB__CREATE_ISSUE", " github--create-issue "} {
		if got, ok := ix.Tool(name); !ok || got.Name != "github__create_issue" {
			t.Errorf("Tool(%q) = %q, %v", name, got.Name, ok)
		}
	}
	if _, ok := ix.Tool("create_issue"); ok {
		t.Error("Tool found create_issue, which is no tool's full name")
	}
	tests := []struct{ name, want string }{
		{"github__create_isue", "github__create_issue"},
		{"create_issue", "github__create_issue"},
		{"browser_screenshot", "playwright__browser_take_screenshot"},
		{"sequential_thinking", "sequential-thinking__sequentialthinking"},
		{"memory_read_graph", "memory__read_graph"},
	}
	for _, tc := range tests {
		if got := ix.Closest(tc.name, 3); !slices.Contains(got, tc.want) {
			t.Errorf("Closest(%q) = %v, want %s among them", tc.name, got, tc.want)
		}
	}
	if got := ix.Closest("qqqqqqqq", 3); len(got) != 0 {
		t.Errorf("Closest of nonsense = %v", got)
	}
}

func TestSearchRanksExactNamesFirst(t *testing.T) {
	t.Parallel()
	ix := NewIndex(corpusTools(t))
	tests := []struct{ query, want string }{
		{"browser_click", "playwright__browser_click"},
		{"firecrawl_scrape", "firecrawl__firecrawl_scrape"},
		{"memory__open_nodes", "memory__open_nodes"},
		{"Take Screenshot", "chrome-devtools__take_screenshot"},
	}
	for _, tc := range tests {
		if hits := ix.Search(tc.query, 3); len(hits) == 0 || hits[0].Name != tc.want {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, hits, tc.want)
		}
	}
}

func TestEmptyIndex(t *testing.T) {
	t.Parallel()
	ix := NewIndex(nil)
	if hits := ix.Search("anything", 5); len(hits) != 0 {
		t.Errorf("hits in an empty index: %v", hits)
	}
	if hits, err := ix.Regex(".*", 5); err != nil || len(hits) != 0 {
		t.Errorf("regex hits in an empty index: %v %v", hits, err)
	}
	if got := ix.Closest("read", 3); len(got) != 0 {
		t.Errorf("closest in an empty index: %v", got)
	}
	dup := NewIndex([]tool.Tool{{Name: "a", Description: "first"}, {Name: "a", Description: "second"}, {Description: "nameless"}})
	if dup.Len() != 1 {
		t.Errorf("%d tools indexed; duplicates and nameless tools must be left out", dup.Len())
	}
}

func TestRegexLimits(t *testing.T) {
	t.Parallel()
	ix := NewIndex(corpusTools(t))
	if _, err := ix.Regex(strings.Repeat("a", MaxPatternLen+1), 5); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("over-long pattern: %v", err)
	}
	if _, err := ix.Regex("(a{1000}){1000}", 5); err == nil {
		t.Error("a pattern too large to compile was accepted")
	}
	hits, err := ix.Regex("issue", 40)
	if err != nil {
		t.Fatal(err)
	}
	nameHits := 0
	for i, h := range hits {
		if strings.Contains(h.Name, "issue") {
			if i != nameHits {
				t.Errorf("name match %s ranked after a description match", h.Name)
			}
			nameHits++
		}
	}
	if nameHits == 0 || nameHits == len(hits) {
		t.Errorf("want name matches then description matches, got %v", hits)
	}
}

// FuzzSearch checks that no query or pattern makes the search panic, and
// that what it returns is well-formed.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"take a screenshot", "", "PRs", "(", "[[:alpha:]]+", `\p{Greek}`, "a{1000}", "日本語 のテスト", "\xff\xfe", "__", "~creat"} {
		f.Add(s, false, 5)
		f.Add(s, true, 3)
	}
	ix := NewIndex(corpusTools(f))
	f.Fuzz(func(t *testing.T, q string, regex bool, limit int) {
		var hits []Hit
		if regex {
			var err error
			if hits, err = ix.Regex(q, limit); err != nil {
				return
			}
		} else {
			hits = ix.Search(q, limit)
			ix.Closest(q, 3)
		}
		if len(hits) > max(limit, 0) {
			t.Fatalf("%d hits for limit %d", len(hits), limit)
		}
		for i, h := range hits {
			if _, ok := ix.Tool(h.Name); !ok {
				t.Fatalf("hit %q is no tool", h.Name)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("hits out of order: %v", hits)
			}
		}
	})
}
