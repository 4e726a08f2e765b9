package compact

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/tool"
)

// Index finds tools by what they do: BM25F ranking over each tool's name,
// server prefix, label, description, and parameter names and descriptions,
// or a regular expression over names and descriptions. An Index is
// immutable once built and safe for concurrent use; when the tool list
// changes, build a new one (about 10 ms for 150 tools).
type Index struct {
	tools  []tool.Tool
	lines  []string // one-line descriptions
	byName map[string]int
	byFold map[string]int // names folded: case and separators dropped

	cfg      config
	syn      synonymTable
	postings map[string][]posting
	idf      map[string]float64
}

// posting is one tool's saturating term frequency for one term: the field
// frequencies weighted and normalized by field length (BM25F).
type posting struct {
	doc int
	tf  float64
}

// Hit is one tool a search found.
type Hit struct {
	// Name is the tool's name, as tool_call takes it.
	Name string `json:"name"`
	// Line is its one-line description.
	Line string `json:"description"`
	// Score ranks hits, higher first; only the order of scores means
	// anything.
	Score float64 `json:"score"`
}

// field is one part of a tool that is indexed.
type field int

const (
	fieldName      field = iota // the tool's own name, without a server prefix
	fieldServer                 // the server prefix of an imported tool ("github" in github__create_issue)
	fieldLabel                  // the label, when it says more than the name
	fieldDesc                   // the whole description
	fieldParams                 // parameter names, at any depth
	fieldParamDesc              // parameter descriptions and enum values
	numFields
)

// fieldWeight is how much a field counts and how much its length
// normalizes it (BM25's b).
type fieldWeight struct {
	weight, b float64
}

// config is the ranking's configuration; see defaultConfig.
type config struct {
	analyzer analyzer
	fields   [numFields]fieldWeight
	k1       float64
}

// defaultConfig holds the weights tuned on the query set (see the quality
// test): a word of the name counts four times a word of the description,
// a parameter's name a little less than the description and its
// description less still.
var defaultConfig = config{
	analyzer: defaultAnalyzer,
	fields: [numFields]fieldWeight{
		fieldName:      {4.0, 0.3},
		fieldServer:    {1.0, 0},
		fieldLabel:     {0.5, 0.3},
		fieldDesc:      {1.0, 0.75},
		fieldParams:    {0.7, 0.5},
		fieldParamDesc: {0.3, 0.75},
	},
	k1: 1.6,
}

// ServerSeparator separates an imported tool's server from its own name
// ("github__create_issue").
const ServerSeparator = "__"

// NewIndex builds an index over tools. Tools without a name are left out.
func NewIndex(tools []tool.Tool) *Index { return newIndex(tools, defaultConfig) }

func newIndex(tools []tool.Tool, cfg config) *Index {
	ix := &Index{
		byName:   make(map[string]int, len(tools)),
		byFold:   make(map[string]int, len(tools)),
		cfg:      cfg,
		syn:      cfg.analyzer.synonymTable(),
		postings: map[string][]posting{},
		idf:      map[string]float64{},
	}
	for _, t := range tools {
		if t.Name == "" {
			continue
		}
		if _, dup := ix.byName[t.Name]; dup {
			continue
		}
		ix.byName[t.Name] = len(ix.tools)
		if _, dup := ix.byFold[fold(t.Name)]; !dup {
			ix.byFold[fold(t.Name)] = len(ix.tools)
		}
		ix.tools = append(ix.tools, t)
		ix.lines = append(ix.lines, Summary(t))
	}
	// The terms of each field, and each field's average length.
	fields := make([][numFields][]string, len(ix.tools))
	var avg [numFields]float64
	for i, t := range ix.tools {
		texts := fieldTexts(t)
		for f := range numFields {
			fields[i][f] = cfg.analyzer.terms(texts[f])
			avg[f] += float64(len(fields[i][f]))
		}
	}
	for f := range numFields {
		avg[f] = max(avg[f]/float64(max(len(fields), 1)), 1)
	}
	for i := range fields {
		combined := map[string]float64{}
		for f := range numFields {
			w := cfg.fields[f]
			if w.weight == 0 {
				continue
			}
			each := w.weight / (1 - w.b + w.b*float64(len(fields[i][f]))/avg[f])
			for _, term := range fields[i][f] {
				combined[term] += each
			}
		}
		for term, tf := range combined {
			ix.postings[term] = append(ix.postings[term], posting{doc: i, tf: tf})
		}
	}
	n := float64(len(ix.tools))
	for term, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[term] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return ix
}

// fieldTexts returns the text of each field of t.
func fieldTexts(t tool.Tool) [numFields]string {
	var out [numFields]string
	server, own, ok := strings.Cut(t.Name, ServerSeparator)
	if !ok {
		server, own = "", t.Name
	}
	out[fieldName] = own
	out[fieldServer] = server
	if label := t.DisplayLabel(); fold(label) != fold(own) && fold(label) != fold(t.Name) {
		out[fieldLabel] = label
	}
	out[fieldDesc] = t.Description
	var names, descs strings.Builder
	walkParams(t.Params(), 0, func(name string, s *jsonschema.Schema) {
		names.WriteString(name)
		names.WriteByte(' ')
		descs.WriteString(s.Description)
		descs.WriteByte(' ')
		for _, v := range s.Enum {
			if str, ok := v.(string); ok {
				descs.WriteString(str)
				descs.WriteByte(' ')
			}
		}
	})
	out[fieldParams] = names.String()
	out[fieldParamDesc] = descs.String()
	return out
}

// maxParamDepth bounds how deep walkParams follows nested parameters.
const maxParamDepth = 4

// walkParams calls fn for every named property of s, nested objects and
// array items included, in sorted order.
func walkParams(s *jsonschema.Schema, depth int, fn func(name string, p *jsonschema.Schema)) {
	if s == nil || depth > maxParamDepth {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		fn(name, p)
		walkParams(p, depth+1, fn)
	}
	walkParams(s.Items, depth+1, fn)
	for _, sub := range slices.Concat(s.AnyOf, s.OneOf, s.AllOf) {
		walkParams(sub, depth+1, fn)
	}
}

// Len returns the number of tools in the index.
func (ix *Index) Len() int { return len(ix.tools) }

// Tool returns the tool with this name: the exact name, or else the one
// name that matches it with case and separators ignored.
func (ix *Index) Tool(name string) (tool.Tool, bool) {
	name = strings.TrimSpace(name)
	i, ok := ix.byName[name]
	if !ok {
		i, ok = ix.byFold[fold(name)]
	}
	if !ok {
		return tool.Tool{}, false
	}
	return ix.tools[i], true
}

// Search ranks the tools for a natural-language query and returns at most
// limit of them, best first. Tools that share no term with the query are
// not returned.
func (ix *Index) Search(query string, limit int) []Hit {
	if limit <= 0 || len(ix.tools) == 0 {
		return nil
	}
	scores := make([]float64, len(ix.tools))
	k1 := ix.cfg.k1
	for _, qt := range ix.cfg.analyzer.query(query, ix.syn) {
		idf := ix.idf[qt.term]
		for _, p := range ix.postings[qt.term] {
			scores[p.doc] += qt.weight * idf * p.tf * (k1 + 1) / (p.tf + k1)
		}
	}
	// A query that names a tool finds it first.
	if i, ok := ix.exactName(query); ok && scores[i] > 0 {
		scores[i] += exactNameBonus
	}
	return ix.top(scores, limit)
}

// exactNameBonus puts a tool a query names outright above any other.
const exactNameBonus = 1000

// exactName finds the tool a query names: its full name or, for an imported
// tool, its own name without the server, ignoring case and separators.
func (ix *Index) exactName(query string) (int, bool) {
	q := fold(query)
	if q == "" {
		return 0, false
	}
	if i, ok := ix.byFold[q]; ok {
		return i, true
	}
	found := -1
	for i, t := range ix.tools {
		if _, own, ok := strings.Cut(t.Name, ServerSeparator); ok && fold(own) == q {
			if found >= 0 {
				return 0, false // ambiguous: several servers have it
			}
			found = i
		}
	}
	return found, found >= 0
}

// top returns the hits with the highest positive scores, best first; ties
// keep the tools' order.
func (ix *Index) top(scores []float64, limit int) []Hit {
	var hits []Hit
	for i, s := range scores {
		if s > 0 {
			hits = append(hits, Hit{Name: ix.tools[i].Name, Line: ix.lines[i], Score: s})
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(limit, len(hits))]
}

// MaxPatternLen bounds a regular expression given to [Index.Regex].
const MaxPatternLen = 1000

// Regex returns at most limit tools whose name or description matches the
// regular expression (RE2 syntax, case-insensitive): those whose name
// matches first, then those whose description does, each in the tools'
// order. A pattern that does not compile is an error written for the model.
func (ix *Index) Regex(pattern string, limit int) ([]Hit, error) {
	if len(pattern) > MaxPatternLen {
		return nil, fmt.Errorf("the pattern is %d bytes long; use at most %d", len(pattern), MaxPatternLen)
	}
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		return nil, fmt.Errorf("the pattern is not a valid regular expression (RE2 syntax): %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if limit <= 0 {
		return nil, nil
	}
	scores := make([]float64, len(ix.tools))
	for i, t := range ix.tools {
		switch {
		case re.MatchString(t.Name):
			scores[i] = 2
		case re.MatchString(t.Description):
			scores[i] = 1
		}
	}
	return ix.top(scores, limit), nil
}

// Closest returns up to n tool names that look most like name: those the
// words of name find, and those that share the most letter triples with it
// (typos), best first.
func (ix *Index) Closest(name string, n int) []string {
	type scored struct {
		i     int
		score float64
	}
	want := trigrams(fold(name))
	var cands []scored
	for i, t := range ix.tools {
		if s := dice(want, trigrams(fold(t.Name))); s >= minSimilarity {
			cands = append(cands, scored{i, s})
		}
	}
	// Words of the name, searched as a query, find tools whose name or
	// description shares them; the best of those count as similar.
	for rank, h := range ix.Search(name, n) {
		i := ix.byName[h.Name]
		bonus := minSimilarity + 0.1/float64(rank+1)
		if j := slices.IndexFunc(cands, func(c scored) bool { return c.i == i }); j >= 0 {
			cands[j].score += bonus
		} else {
			cands = append(cands, scored{i, bonus})
		}
	}
	slices.SortStableFunc(cands, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	out := make([]string, 0, min(n, len(cands)))
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, ix.tools[c.i].Name)
	}
	return out
}

// minSimilarity is the least trigram similarity of a plausible typo.
const minSimilarity = 0.4

// trigrams returns the set of letter triples of s, padded at both ends so
// short names have some.
func trigrams(s string) map[string]bool {
	s = " " + s + " "
	out := map[string]bool{}
	r := []rune(s)
	for i := 0; i+3 <= len(r); i++ {
		out[string(r[i:i+3])] = true
	}
	return out
}

// dice is the Sørensen–Dice similarity of two sets: 1 when equal, 0 when
// disjoint.
func dice(a, b map[string]bool) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	common := 0
	for k := range a {
		if b[k] {
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// fold lowercases s and drops separators and spaces, so "Create-Issue",
// "create_issue" and "createissue" fold alike.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.', '/', ':':
			return -1
		}
		return unicode.ToLower(r)
	}, strings.TrimSpace(s))
}
