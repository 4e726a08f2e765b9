package schema

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
)

// TestCorpusFingerprints compiles every tool of the corpus for every
// dialect and compares a SHA-256 of the compiled schema and the report
// (every change, in order) with testdata/corpus.sha256: an optimisation of
// the compiler must leave every output byte for byte as it was. After a
// deliberate change of the output, rewrite the file with -update (and
// review the golden files' diff, which shows what changed).
func TestCorpusFingerprints(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, tl := range loadCorpus(t) {
		for _, d := range testDialects() {
			out, rep := d.Compile(tl.Doc)
			h := sha256.New()
			fmt.Fprintln(h, encode(t, out))
			for _, c := range rep.Changes {
				fmt.Fprintln(h, c.String())
			}
			fmt.Fprintln(h, "notStrict")
			for _, c := range rep.NotStrict {
				fmt.Fprintln(h, c.String())
			}
			fmt.Fprintf(&b, "%x %s/%s %s\n", h.Sum(nil)[:12], tl.Server, tl.Name, d.Name())
		}
	}
	path := filepath.Join("testdata", "corpus.sha256")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCorpusFingerprints -update to create it)", err)
	}
	got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
	if len(got) != len(wantLines) {
		t.Fatalf("%d compilations, %s has %d", len(got)-1, path, len(wantLines)-1)
	}
	for i := range got {
		if got[i] != wantLines[i] {
			t.Errorf("compiled output changed: got %q, want %q", got[i], wantLines[i])
		}
	}
}

// TestKeywordClassFollowsTheLists: keywordClass, which children and shapes
// use instead of searching the lists, gives each keyword of the lists its
// class and its position as the bit, and nothing to any other key.
func TestKeywordClassFollowsTheLists(t *testing.T) {
	bit := 0
	for _, l := range []struct {
		class int
		list  []string
	}{{classSub, subschemaKeywords}, {classMap, schemaMapKeywords}, {classList, schemaListKeywords}} {
		for _, k := range l.list {
			if c, b := keywordClass(k); c != l.class || b != bit {
				t.Errorf("keywordClass(%q) = %d, %d; want %d, %d", k, c, b, l.class, bit)
			}
			bit++
		}
	}
	for _, k := range []string{"type", "description", "enum", "$ref", "required", "default", hintKey, ""} {
		if c, b := keywordClass(k); c != 0 || b != -1 {
			t.Errorf("keywordClass(%q) = %d, %d; want 0, -1", k, c, b)
		}
	}
}

// TestImpliesFollowsTheLists: implies, which inferType uses instead of
// looking up every keyword of the lists, ranks each keyword of a list by
// the order inferType tries the lists in, and any other key 0.
func TestImpliesFollowsTheLists(t *testing.T) {
	for i, list := range [][]string{numberKeywords, stringKeywords, arrayKeywords, objectKeywords} {
		for _, k := range list {
			if got := implies(k); got != i+1 {
				t.Errorf("implies(%q) = %d, want %d", k, got, i+1)
			}
		}
	}
	for _, k := range []string{"type", "description", "enum", "const", "$ref", "anyOf", "default", hintKey, ""} {
		if got := implies(k); got != 0 {
			t.Errorf("implies(%q) = %d, want 0", k, got)
		}
	}
}

// TestLiteralMatchesEncode: literal's shortcut for plain strings, numbers
// and booleans writes what the JSON encoder writes (cut at 80 bytes).
func TestLiteralMatchesEncode(t *testing.T) {
	values := []any{nil, true, false, "", "abc", "a b-c_d.e/f:g", "<&>", `say "hi"`, `back\slash`, "tab\there",
		"line\nbreak", "\x7f", "é", "\u2028", "\xff", strings.Repeat("x", 79), strings.Repeat("y", 78), strings.Repeat("z", 200),
		json.Number("0"), json.Number("-0"), json.Number("12"), json.Number("-12.50"), json.Number("1e3"), json.Number("01"),
		json.Number("1."), json.Number(".5"), json.Number("-"), json.Number(""), json.Number("1.5E-7"), json.Number(strings.Repeat("9", 100)),
		1.5, 3, []any{"a", json.Number("1")}, map[string]any{"k": "v"}}
	for _, v := range values {
		var want string
		if b, err := Encode(v); err == nil {
			want = textclip.Clip(string(b), 80)
		} else {
			want = fmt.Sprint(v)
		}
		if got := literal(v); got != want {
			t.Errorf("literal(%#v) = %q, want %q", v, got, want)
		}
	}
}

// TestAcceptsFollowsTheSets: the bit mask Accepts answers from gives, for
// every dialect, what the dialect's keyword sets say, for the indexed
// keywords and any other; keywordIndex finds each indexed keyword's bit.
func TestAcceptsFollowsTheSets(t *testing.T) {
	if len(indexedKeywords) > 64 {
		t.Fatalf("%d indexed keywords: the mask holds 64", len(indexedKeywords))
	}
	for i, k := range indexedKeywords {
		if got := keywordIndex(k); got != i {
			t.Errorf("keywordIndex(%q) = %d, want %d", k, got, i)
		}
	}
	words := append(slices.Clone(indexedKeywords), "x-custom", "", hintKey, "Type", "$dynamicRef")
	dialects := append(testDialects(), Compat("nullable", "x-custom", "description"), Dialect{name: "plain"})
	for _, d := range dialects {
		for _, k := range words {
			if got, want := d.Accepts(k), d.inSets(k); got != want {
				t.Errorf("%s: Accepts(%q) = %v, the sets say %v", d.Name(), k, got, want)
			}
			want := ""
			if !d.inSets(k) {
				want = d.Name() + " does not accept " + strconv.Quote(k)
			}
			if got := (&compiler{d: d}).rejects(k); got != want {
				t.Errorf("%s: rejects(%q) = %q, want %q", d.Name(), k, got, want)
			}
		}
	}
	for _, k := range []string{"x-custom", "Type", ""} {
		if keywordIndex(k) != -1 {
			t.Errorf("keywordIndex(%q) should be -1", k)
		}
	}
}

// TestSettledLeavesCompileAsBefore: the shortcuts that share a settled leaf
// and send a plain leaf through the passes from strip on only (see
// Dialect.leafKind) give the same schema and report as every pass,
// for every tool of the corpus and for leaves at the edge of the test, in
// every dialect.
func TestSettledLeavesCompileAsBefore(t *testing.T) {
	docs := []any{}
	for _, tl := range loadCorpus(t) {
		docs = append(docs, tl.Doc)
	}
	for _, leaf := range []string{
		`{"type":"string"}`, `{"type":"string","enum":["a","b"]}`, `{"type":"string","enum":["a",null]}`,
		`{"type":"string","enum":[]}`, `{"type":"integer","enum":[1,2]}`, `{"type":"string","enum":"a"}`,
		`{"type":"string","format":"date-time"}`, `{"type":"string","format":"uuid"}`, `{"type":"integer","format":"int64"}`,
		`{"type":"string","format":7}`, `{"type":"number","minimum":0,"maximum":1}`, `{"type":"string","minLength":1,"maxLength":9}`,
		`{"type":"boolean","default":true,"description":"Default: true"}`, `{"type":"string","title":"T"}`, `{"type":"null"}`,
		`{"type":"array"}`, `{"type":"object"}`, `{"type":"str"}`, `{"type":["string","null"]}`, `{"type":"string","nullable":true}`,
		`{"type":"string","const":"x"}`, `{"type":"string","pattern":"^a$","examples":["a"]}`, `{"type":"integer","exclusiveMinimum":true,"minimum":0}`,
		`{"type":"string","title":{"x":1}}`, `{"type":"string","x-extra":1}`, `{"type":"number","multipleOf":0.5,"deprecated":true}`,
		`{"type":"string","format":"email","default":"a"}`, `{"type":"integer","enum":[1,null]}`, `{"type":"boolean","description":7,"default":false}`,
		`{"type":"string","enum":["a",1],"minLength":1}`, `{"type":"number","minimum":0,"description":"Default: 0","default":0}`,
		`{"type":"string","enum":[null]}`, `{"type":"integer","title":"Count","examples":[1,2,3,4],"readOnly":true}`,
	} {
		v, err := Decode([]byte(`{"type":"object","properties":{"p":` + leaf + `},"required":["p"]}`))
		if err != nil {
			t.Fatal(leaf, err)
		}
		w, _ := Decode([]byte(`{"type":"object","properties":{"p":` + leaf + `}}`))
		docs = append(docs, v, w)
	}
	for _, d := range append(testDialects(), Compat("enum", "title")) {
		for _, doc := range docs {
			fast, fastRep := d.compile(doc, false)
			slow, slowRep := d.compile(doc, true)
			if a, b := encode(t, fast), encode(t, slow); a != b {
				t.Errorf("%s: the shortcut compiled %s\nthe passes %s", d.Name(), a, b)
			}
			if a, b := fastRep.String(), slowRep.String(); a != b {
				t.Errorf("%s: the shortcut reported\n%s\nthe passes\n%s", d.Name(), a, b)
			}
		}
	}
}

// TestStrictLimits: strict mode's documented limits on the whole compiled
// schema (properties in all, object nesting, enum values in all) are
// reported as reasons it cannot be strict, and a schema within them is not.
func TestStrictLimits(t *testing.T) {
	nested := `{"type":"string"}`
	for range 11 {
		nested = `{"type":"object","properties":{"a":` + nested + `},"required":["a"],"additionalProperties":false}`
	}
	var enum, props []string
	for i := range 1001 {
		enum = append(enum, strconv.Quote(strconv.Itoa(i)))
	}
	for i := range 5001 {
		props = append(props, `"p`+strconv.Itoa(i)+`":{"type":"string"}`)
	}
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"x":` + nested + `}}`, "objects nest 12 levels deep: strict mode takes at most 10"},
		{`{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(enum, ",") + `]}},"required":["e"]}`, "1001 enum values in all: strict mode takes at most 1000"},
		{`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`, "5001 properties in all: strict mode takes at most 5000"},
		{`{"type":"object","properties":{"x":{"type":"object","properties":{"y":{"type":"string","enum":["a","b"]}}}}}`, ""},
	} {
		doc, err := Decode([]byte(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		_, rep := OpenAIStrict.Compile(doc)
		var limits []string
		for _, ns := range rep.NotStrict {
			if ns.Path == "" {
				limits = append(limits, ns.Action)
			}
		}
		if got := strings.Join(limits, "; "); got != tc.want {
			t.Errorf("root reasons not strict = %q, want %q", got, tc.want)
		}
	}
}

// TestPooledCompilersLeaveNothingBehind: a compilation by a compiler from
// the pool, which compiled other schemas before, gives the schema and the
// report a new compiler gives; and a report kept while others are compiled
// stays as it was (its lists are not the pooled compiler's).
func TestPooledCompilersLeaveNothingBehind(t *testing.T) {
	// A uses the definition x, B has an x it does not use: the second
	// must still be reported unused, whatever the compiler recorded for
	// the first.
	docs := []any{
		decode(t, `{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string","minLength":2}}}`),
		decode(t, `{"type":"object","properties":{"q":{"type":"string"}},"$defs":{"x":{"type":"integer"}}}`),
	}
	for _, tc := range hardCases {
		docs = append(docs, decode(t, tc.schema))
	}
	for _, tl := range loadCorpus(t) {
		docs = append(docs, tl.Doc)
	}
	type result struct {
		out any
		rep Report
	}
	for _, d := range testDialects() {
		var kept []result
		for _, doc := range docs {
			out, rep := d.Compile(doc)
			kept = append(kept, result{out, rep})
		}
		for i, doc := range docs {
			out, rep := newCompiler().run(d, doc, false)
			if a, b := encode(t, kept[i].out), encode(t, out); a != b {
				t.Errorf("%s, schema %d: pooled compiler gave %s\nnew compiler %s", d.Name(), i, a, b)
			}
			if a, b := encode(t, kept[i].rep), encode(t, rep); a != b {
				t.Errorf("%s, schema %d: kept report is now %s\nnew compiler reports %s", d.Name(), i, a, b)
			}
		}
	}
}

// TestLiteralUnionOrderIsStable: an alternative with both a const and an
// enum (found by FuzzSettledLeaves) gives its values in one order, the
// const first, whatever the order Go's map iteration visits them in: the
// compiled enum was different from one compilation to the next.
func TestLiteralUnionOrderIsStable(t *testing.T) {
	doc := decode(t, `{"properties":{"p":{"oneOf":[{"const":"a","x-note":"1"},{"const":"c","enum":["b"]}]}}}`)
	for _, d := range testDialects() {
		first, _ := d.Compile(doc)
		want := encode(t, first)
		for range 64 {
			out, _ := d.Compile(doc)
			if got := encode(t, out); got != want {
				t.Fatalf("%s: compiled %s, then %s", d.Name(), want, got)
			}
		}
	}
	vals, _, _, ok := literals([]any{map[string]any{"enum": []any{"b"}, "const": "c"}, map[string]any{"const": "a"}})
	if got := fmt.Sprint(vals); !ok || got != "[c b a]" {
		t.Errorf("literals = %s, %v; want [c b a], true", got, ok)
	}
}

// TestCompiledSchemaSharesOnlySettledLeaves: Compile's result shares with
// its input only settled leaves (see Dialect.leafKind) among its schemas.
// Every other schema of the result is the compiler's own: changing each of
// them leaves the input as it was, and no compilation changes its input.
func TestCompiledSchemaSharesOnlySettledLeaves(t *testing.T) {
	var docs []any
	for _, tc := range hardCases {
		docs = append(docs, decode(t, tc.schema))
	}
	for _, tl := range loadCorpus(t) {
		docs = append(docs, tl.Doc)
	}
	ptr := func(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }
	for _, d := range testDialects() {
		shared := 0
		for i, doc := range docs {
			before := encode(t, doc)
			inInput := map[uintptr]bool{}
			var collect func(v any)
			collect = func(v any) {
				switch x := v.(type) {
				case map[string]any:
					inInput[ptr(x)] = true
					for _, e := range x {
						collect(e)
					}
				case []any:
					for _, e := range x {
						collect(e)
					}
				}
			}
			collect(doc)
			out, _ := d.Compile(doc)
			var own []map[string]any
			var walk func(m map[string]any)
			walk = func(m map[string]any) {
				if inInput[ptr(m)] {
					shared++
					if _, settled := d.leafKind(m); !settled {
						t.Errorf("%s, schema %d: the result shares a schema of the input that is not a settled leaf: %s", d.Name(), i, encode(t, m))
					}
					return
				}
				own = append(own, m)
				for k, v := range m {
					switch class, _ := keywordClass(k); class {
					case classSub:
						if s, ok := v.(map[string]any); ok {
							walk(s)
						}
					case classMap:
						if ss, ok := v.(map[string]any); ok {
							for _, s := range ss {
								if s, ok := s.(map[string]any); ok {
									walk(s)
								}
							}
						}
					case classList:
						if ss, ok := v.([]any); ok {
							for _, s := range ss {
								if s, ok := s.(map[string]any); ok {
									walk(s)
								}
							}
						}
					}
				}
			}
			walk(out)
			if after := encode(t, doc); after != before {
				t.Fatalf("%s, schema %d: Compile changed its input", d.Name(), i)
			}
			for _, m := range own {
				m["x-changed"] = true
				if p, ok := m["properties"].(map[string]any); ok {
					p["x-added"] = map[string]any{}
				}
			}
			if after := encode(t, doc); after != before {
				t.Fatalf("%s, schema %d: changing the result's own schemas changed the input:\nbefore %s\nafter  %s", d.Name(), i, before, after)
			}
		}
		if shared == 0 {
			t.Errorf("%s: no settled leaf shared in the corpus", d.Name())
		}
	}
}

// TestReportOrderIsAStableSortByPath: the report's lists come out as a
// stable sort by path of the changes in the order they were made (what
// byPath must give, whether the list was in order or not), on lists of
// every length up to 300 with many equal paths, in order, in reverse
// order (a run per path) and at random.
func TestReportOrderIsAStableSortByPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		for _, kind := range []string{"random", "sorted", "reversed"} {
			src := make([]Change, n)
			for i := range src {
				src[i] = Change{Path: "p" + strconv.Itoa(rng.IntN(n/3+1)), Action: strconv.Itoa(i)}
			}
			switch kind {
			case "sorted":
				slices.SortStableFunc(src, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
			case "reversed":
				slices.SortStableFunc(src, func(a, b Change) int { return strings.Compare(b.Path, a.Path) })
			}
			want := slices.Clone(src)
			slices.SortStableFunc(want, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
			before := slices.Clone(src)
			got := make([]Change, n)
			byPath(got, src)
			if !slices.Equal(got, want) {
				t.Fatalf("%s list of %d: byPath gave\n%v\nwant\n%v", kind, n, got, want)
			}
			if !slices.Equal(src, before) {
				t.Fatalf("%s list of %d: byPath changed its source", kind, n)
			}
		}
	}
}

// TestStrictChangePaths: the paths of strict mode's "made required and
// nullable" changes (cut from one string per object, see propertyPaths)
// are those of child: dotted identifiers, other names quoted in brackets,
// at the root and below, one per optional property in the order of the
// names, each its own string.
func TestStrictChangePaths(t *testing.T) {
	doc := decode(t, `{"type":"object","required":["a"],"properties":{
		"a":{"type":"string"},"with-dash":{"type":"string"},"9lives":{"type":"integer"},"":{"type":"boolean"},
		"q\"uote":{"type":"number"},"ü":{"type":"string"},"$x":{"type":"string"},
		"o":{"type":"object","properties":{"b c":{"type":"string"},"d":{"type":"string"}},"required":["d"]},
		"list":{"type":"array","items":{"type":"object","properties":{"e":{"type":"string","maxLength":3}}}}}}`)
	_, rep := OpenAIStrict.Compile(doc)
	var got []string
	for _, c := range rep.Changes {
		if c.Action == "made required and nullable: null stands for leaving it out" {
			got = append(got, c.Path)
		}
	}
	want := []string{ // in the report's order, by path
		`properties.$x`,
		`properties.list`,
		`properties.list.items.properties.e`,
		`properties.o`,
		`properties.o.properties["b c"]`,
		`properties.with-dash`,
		`properties[""]`,
		`properties["9lives"]`,
		`properties["q\"uote"]`,
		`properties["ü"]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("paths of the strict changes:\n got %q\nwant %q", got, want)
	}
}

// TestStrictProblems: the problems of strict mode's changes on every
// object name the dialect, compilation after compilation by pooled
// compilers that compile other dialects in between (strictProblem keeps
// them per dialect). TestCorpusFingerprints does not cover problems.
func TestStrictProblems(t *testing.T) {
	doc := decode(t, `{"type":"object","properties":{"a":{"type":"string"},"o":{"type":"object","properties":{"b":{"type":"integer"}}}}}`)
	want := map[string]string{
		"additionalProperties":              "openai-strict needs additionalProperties: false on every object",
		"properties.o.additionalProperties": "openai-strict needs additionalProperties: false on every object",
		"properties.a":                      "openai-strict needs every property in required",
		"properties.o":                      "openai-strict needs every property in required",
		"properties.o.properties.b":         "openai-strict needs every property in required",
	}
	for round := range 3 {
		for _, d := range testDialects() {
			d.Compile(doc)
		}
		_, rep := OpenAIStrict.Compile(doc)
		got := map[string]string{}
		for _, c := range rep.Changes {
			got[c.Path] = c.Problem
		}
		if !maps.Equal(got, want) {
			t.Errorf("round %d: problems by path\n got %q\nwant %q", round, got, want)
		}
	}
}

// TestStrictRequiredList: strict mode's required list on each object is
// the names required as given, then the optional ones in order; kept as
// it is when every property is required; an empty list when the object
// has no property, when "required" is missing and when it is a nil list
// (a document built in Go).
func TestStrictRequiredList(t *testing.T) {
	for _, tc := range []struct {
		doc             any
		want, wantBelow string // below the root, an object without properties is open: no list
	}{
		{decode(t, `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}},"required":["b","a"]}`), `["b","a"]`, `["b","a"]`},
		{decode(t, `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"},"c":{"type":"string"}},"required":["c"]}`), `["c","a","b"]`, `["c","a","b"]`},
		{decode(t, `{"type":"object","properties":{"a":{"type":"string"}}}`), `["a"]`, `["a"]`},
		{decode(t, `{"type":"object","properties":{}}`), `[]`, `null`},
		{decode(t, `{"type":"object"}`), `[]`, `null`},
		{map[string]any{"type": "object", "properties": map[string]any{}, "required": []any(nil)}, `[]`, `null`},
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []any(nil)}, `["a"]`, `["a"]`},
	} {
		out, _ := OpenAIStrict.Compile(tc.doc)
		if got := encode(t, out["required"]); got != tc.want {
			t.Errorf("%s: required %s, want %s", encode(t, tc.doc), got, tc.want)
		}
		nested, _ := OpenAIStrict.Compile(map[string]any{"type": "object", "required": []any{"o"}, "properties": map[string]any{"o": tc.doc}})
		inner := nested["properties"].(map[string]any)["o"].(map[string]any)
		if got := encode(t, inner["required"]); got != tc.wantBelow {
			t.Errorf("%s below the root: required %s, want %s", encode(t, tc.doc), got, tc.wantBelow)
		}
	}
}

// TestNullableListsAreNewLists: making an optional property nullable
// gives its enum and type list one more value in new lists (see with):
// the input's lists keep their values and length, and changing the
// result's lists leaves them as they were.
func TestNullableListsAreNewLists(t *testing.T) {
	doc := decode(t, `{"type":"object","properties":{"e":{"type":"string","enum":["a","b"]},"t":{"type":["string","integer"]}}}`)
	before := encode(t, doc)
	out, _ := OpenAIStrict.Compile(doc)
	props := out["properties"].(map[string]any)
	e, t2 := props["e"].(map[string]any), props["t"].(map[string]any)
	if got := encode(t, e["enum"]); got != `["a","b",null]` {
		t.Errorf("enum %s, want [\"a\",\"b\",null]", got)
	}
	if got := encode(t, t2["type"]); got != `["string","integer","null"]` {
		t.Errorf("type %s, want [\"string\",\"integer\",\"null\"]", got)
	}
	for _, l := range []any{e["enum"], t2["type"]} {
		list := l.([]any)
		for i := range list {
			list[i] = "changed"
		}
	}
	if after := encode(t, doc); after != before {
		t.Errorf("changing the result's lists changed the input:\nbefore %s\nafter  %s", before, after)
	}
}

// TestNullableInTypeArrays: how an optional property says null in a
// dialect with type lists (typeArrayNullable): the type and enum get null
// once, a const becomes the enum [const, null], a schema without type,
// enum or const is left to the other ways (an anyOf with null).
func TestNullableInTypeArrays(t *testing.T) {
	for _, tc := range []struct{ prop, want string }{
		{`{"type":"string"}`, `{"type":["string","null"]}`},
		{`{"type":"null"}`, `{"type":"null"}`},
		{`{"type":["string","integer"]}`, `{"type":["string","integer","null"]}`},
		{`{"type":["string","null"]}`, `{"type":["string","null"]}`},
		{`{"type":"string","enum":["a","b"]}`, `{"enum":["a","b",null],"type":["string","null"]}`},
		{`{"type":"string","enum":["a",null]}`, `{"enum":["a",null],"type":["string","null"]}`},
		{`{"enum":[1,2]}`, `{"enum":[1,2,null]}`},
		{`{"const":"x"}`, `{"enum":["x",null]}`},
		{`{"type":"string","const":"x","enum":["x","y"]}`, `{"enum":["x",null],"type":["string","null"]}`},
		{`{"const":null}`, `{"const":null}`},
		{`{"const":"x","enum":["x","y"]}`, `{"enum":["x",null]}`},
		{`{"description":"d"}`, `{"anyOf":[{},{"type":"null"}],"description":"d"}`},
	} {
		doc := decode(t, `{"type":"object","properties":{"p":`+tc.prop+`}}`)
		out, _ := OpenAIStrict.Compile(doc)
		if got := encode(t, out["properties"].(map[string]any)["p"]); got != tc.want {
			t.Errorf("optional %s compiled to %s, want %s", tc.prop, got, tc.want)
		}
	}
}

// TestLeafKeywords: leafKindOf looks up leafKeywords, each an indexed
// keyword once, and finds a leaf with all of them (a map past the size of
// one group) plain, and not once it has one key more.
func TestLeafKeywords(t *testing.T) {
	m := map[string]any{"type": "string"}
	for _, k := range leafKeywords {
		if keywordIndex(k) < 0 || k == "type" || m[k] != nil {
			t.Fatalf("leafKeywords: %q is not indexed, or is there twice", k)
		}
		m[k] = "x"
	}
	m["enum"], m["minimum"], m["examples"] = []any{"a"}, 1.0, []any{"a"}
	for _, d := range testDialects() {
		if plain, _ := d.leafKind(m); !plain {
			t.Errorf("%s: a leaf with every keyword of leafKeywords is not plain", d.Name())
		}
	}
	m["x-extra"] = 1
	if plain, _ := OpenAIStrict.leafKind(m); plain {
		t.Error("a leaf with x-extra is plain")
	}
}
