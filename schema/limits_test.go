package schema

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
)

// leafCases are schemas whose leaves take each way into the result in
// strict mode: shared settled leaves (required), their nullable copies
// (optional), plain leaves cut down by strip, made nullable in place,
// with enums that gain null, leaves inlined twice from one definition,
// leaves inside unions and items, and leaves too deep to be counted.
var leafCases = []string{
	`{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]},"b":{"type":"integer","enum":[1,2,3]},"c":{"type":"string","minLength":1,"enum":["p","q"]},"d":{"type":"boolean","default":true}},"required":["a"]}`,
	`{"type":"object","properties":{"a":{"type":"string","enum":["x",null]},"b":{"type":"string","format":"uri","enum":["u"]},"c":{"type":"number","examples":[1]}},"required":["c"]}`,
	`{"type":"object","$defs":{"e":{"type":"string","enum":["a","b","c"]},"o":{"type":"object","properties":{"l":{"type":"string","enum":["m","n"]},"k":{"type":"integer","maximum":3}}}},"properties":{"x":{"$ref":"#/$defs/e"},"y":{"$ref":"#/$defs/e"},"z":{"$ref":"#/$defs/o"},"w":{"$ref":"#/$defs/o"}},"required":["x"]}`,
	`{"type":"object","properties":{"u":{"anyOf":[{"type":"string","enum":["a"]},{"type":"integer","minimum":0},{"type":"object","properties":{"v":{"type":"string","enum":["b","c"]}}}]},"l":{"type":"array","items":{"type":"string","enum":["d","e"],"maxLength":3}}}}`,
	`{"type":"object","properties":{"s":{"type":"string","const":"k"},"t":{"oneOf":[{"const":"a"},{"const":"b"}]},"n":{"type":["string","null"],"enum":["z",null]}}}`,
	`{"type":"object","properties":{"obj":{"type":"object","enum":[{"a":1}],"properties":{"a":{"type":"integer","enum":[1]}}}}}`,
}

// TestLimitBoundsHoldCounts: the bounds strict mode tallies while
// compiling (see limitBounds) are at least what the walk of the result
// counts — properties, enum values, nesting — on the corpus, the hard
// cases, schemas of leaves of every kind, unions of literals and consts
// that become enums, and schemas near and past each limit; and they let
// the corpus skip the walk. It fails if a way into the result escapes the
// tally: a result over a limit would then go unreported.
func TestLimitBoundsHoldCounts(t *testing.T) {
	var docs []any
	corpus := loadCorpus(t)
	for _, tl := range corpus {
		docs = append(docs, tl.Doc)
	}
	for _, tc := range hardCases {
		docs = append(docs, decode(t, tc.schema))
	}
	for _, s := range append(leafCases, boundCases()...) {
		docs = append(docs, decode(t, s))
	}
	skipped := 0
	for i, doc := range docs {
		c := newCompiler()
		out, _ := c.run(OpenAIStrict, doc, false)
		b := c.bounds
		p, e, d := limitCounts(out)
		if p > b.props || e > b.enums || d > b.levels+1 {
			t.Errorf("counted %d properties, %d enum values, depth %d; bounds %d, %d, %d\nschema %s", p, e, d, b.props, b.enums, b.levels+1, textclip.Clip(encode(t, out), 600))
		}
		if i < len(corpus) && b.props <= strictMaxProperties && b.enums <= strictMaxEnumValues && b.levels+1 <= strictMaxNesting {
			skipped++
		}
	}
	if skipped < len(corpus)*9/10 {
		t.Errorf("%d of %d corpus schemas skip the walk", skipped, len(corpus))
	}
}

// boundCases are schemas near and past strict mode's limits, reached in
// each way the compiler builds a result: nesting through properties,
// items, unions and definitions; enums from consts, literal unions and
// nullable optional properties.
func boundCases() []string {
	nest := func(n int, wrap func(string) string) string {
		s := `{"type":"string","enum":["a","b"]}`
		for range n {
			s = wrap(s)
		}
		return `{"type":"object","properties":{"x":` + s + `}}`
	}
	values := func(n int, f func(int) string) string {
		var out []string
		for i := range n {
			out = append(out, f(i))
		}
		return strings.Join(out, ",")
	}
	obj := func(s string) string { return `{"type":"object","properties":{"a":` + s + `}}` }
	return []string{
		nest(9, obj),
		nest(10, obj),
		nest(11, func(s string) string { return `{"type":"object","properties":{"a":` + s + `},"required":["a"]}` }),
		nest(11, func(s string) string { return `{"type":"array","items":` + obj(s) + `}` }),
		nest(6, func(s string) string { return `{"anyOf":[` + obj(s) + `,{"type":"null"}]}` }),
		nest(6, func(s string) string { return `{"anyOf":[` + obj(s) + `]}` }),
		nest(6, func(s string) string { return `{"oneOf":[` + obj(s) + `,{"type":"integer"}]}` }),
		nest(6, func(s string) string { return `{"allOf":[` + obj(s) + `,{"description":"d"}]}` }),
		nest(6, func(s string) string { return `{"properties":{"a":` + s + `}}` }),
		`{"type":"object","$defs":{"o":{"type":"object","properties":{"p":{"$ref":"#/$defs/o"},"e":{"enum":[1,2]}}}},"properties":{"a":{"$ref":"#/$defs/o"},"b":{"$ref":"#/$defs/o"}}}`,
		`{"type":"object","definitions":{"o":{"type":"object","properties":{"q":{"const":1}}}},"properties":{"a":{"$ref":"#/definitions/o"},"b":{"$ref":"https://example.com/x"}}}`,
		`{"type":"object","properties":{` + values(600, func(i int) string { return `"p` + strconv.Itoa(i) + `":{"const":` + strconv.Itoa(i) + `}` }) + `}}`,
		`{"type":"object","properties":{` + values(400, func(i int) string {
			return `"p` + strconv.Itoa(i) + `":{"anyOf":[{"const":"a"},{"const":"b"},{"type":"null"}]}`
		}) + `}}`,
		`{"type":"object","properties":{"e":{"type":"string","enum":[` + values(999, func(i int) string { return `"v` + strconv.Itoa(i) + `"` }) + `]}}}`,
		`{"type":"object","properties":{"e":{"oneOf":[` + values(999, func(i int) string { return `{"const":` + strconv.Itoa(i) + `}` }) + `]}}}`,
		`{"type":"object","properties":{` + values(5001, func(i int) string { return `"p` + strconv.Itoa(i) + `":{"type":"integer"}` }) + `}}`,
	}
}

// FuzzStrictLimitCounts: for any input, the bounds strict mode tallies
// while compiling are at least what the walk of the result counts.
func FuzzStrictLimitCounts(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add([]byte(s))
	}
	for _, s := range leafCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := Decode(b)
		if err != nil {
			return
		}
		c := newCompiler()
		out, _ := c.run(OpenAIStrict, doc, false)
		bd := c.bounds
		if p, e, d := limitCounts(out); p > bd.props || e > bd.enums || d > bd.levels+1 {
			t.Fatalf("counted %d, %d, %d; bounds %d, %d, %d", p, e, d, bd.props, bd.enums, bd.levels+1)
		}
	})
}

// TestNullTypeListsStayAsMade: the lists [type, "null"] that every result
// shares (see orNull) are those of jsonTypes, found by jsonTypeIndex,
// and stay as made after compiling the corpus, the hard cases and the
// leaf cases in every dialect, twice (the second time from the results):
// no compilation changes a list it did not make.
func TestNullTypeListsStayAsMade(t *testing.T) {
	check := func() {
		t.Helper()
		for i, typ := range jsonTypes {
			if jsonTypeIndex(typ) != i {
				t.Fatalf("jsonTypeIndex(%q) = %d, want %d", typ, jsonTypeIndex(typ), i)
			}
			if got := encode(t, nullTypes[i]); got != `["`+typ+`","null"]` {
				t.Fatalf("nullTypes[%d] = %s", i, got)
			}
		}
		if jsonTypeIndex("str") != -1 {
			t.Fatal(`jsonTypeIndex("str") != -1`)
		}
	}
	check()
	var docs []any
	for _, tl := range loadCorpus(t) {
		docs = append(docs, tl.Doc)
	}
	for _, tc := range hardCases {
		docs = append(docs, decode(t, tc.schema))
	}
	for _, s := range leafCases {
		docs = append(docs, decode(t, s))
	}
	used := 0
	for _, d := range testDialects() {
		for _, doc := range docs {
			out, _ := d.Compile(doc)
			d.Compile(out)
			if props, ok := out["properties"].(map[string]any); ok {
				for _, p := range props {
					if p, ok := p.(map[string]any); ok && slices.ContainsFunc(nullTypes[:], func(l any) bool { return sameList(l, p["type"]) }) {
						used++
					}
				}
			}
		}
	}
	check()
	if used == 0 {
		t.Error("no result uses the shared lists")
	}
}

// sameList reports whether a and b are the same []any (one backing array,
// same length).
func sameList(a, b any) bool {
	x, ok := a.([]any)
	y, ok2 := b.([]any)
	return ok && ok2 && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
}

// TestPushNamesSorts: pushNames gives the names of a map with their
// values in the order of the names, for maps of every size around the
// switch from insertion sort (12), with pushes nested in between, and
// popNames leaves the stack as it was.
func TestPushNamesSorts(t *testing.T) {
	c := newCompiler()
	r := rand.New(rand.NewPCG(1, 2))
	for size := range 40 {
		outer := map[string]any{}
		for len(outer) < size {
			k := strconv.Itoa(r.IntN(1000))
			outer[k] = k + "!"
		}
		start, end := c.pushNames(outer)
		inner := map[string]any{"b": 1, "a": 2, "c": 3}
		s2, e2 := c.pushNames(inner)
		var got []string
		for i := s2; i < e2; i++ {
			got = append(got, c.names[c.byName[i]].name)
		}
		if !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("inner names %q", got)
		}
		c.popNames(s2)
		got = got[:0]
		for i := start; i < end; i++ {
			e := c.names[c.byName[i]]
			if e.src != e.name+"!" {
				t.Fatalf("size %d: %q holds %v", size, e.name, e.src)
			}
			got = append(got, e.name)
		}
		want := slices.Sorted(maps.Keys(outer))
		if !slices.Equal(got, want) {
			t.Fatalf("size %d: names %q, want %q", size, got, want)
		}
		c.popNames(start)
		if len(c.names) != 0 || len(c.byName) != 0 {
			t.Fatalf("size %d: %d names left", size, len(c.names))
		}
	}
}
