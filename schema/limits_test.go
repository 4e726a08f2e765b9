package schema

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
)

// fullLimitCounts is strict mode's walk of a compiled schema as it was
// before the compiler recorded leaves (see compiler.addLeaf): every node
// read in full.
func fullLimitCounts(root map[string]any) (props, enums, deepest int) {
	var walk func(v any, depth, budget int)
	walk = func(v any, depth, budget int) {
		m, ok := v.(map[string]any)
		if !ok || budget <= 0 {
			return
		}
		if hasType(m, "object") {
			depth++
			deepest = max(deepest, depth)
		}
		for k, e := range m {
			switch k {
			case "properties":
				if p, ok := e.(map[string]any); ok {
					props += len(p)
					for _, s := range p {
						walk(s, depth, budget-1)
					}
				}
			case "enum":
				if l, ok := e.([]any); ok {
					enums += len(l)
				}
			case "items":
				walk(e, depth, budget-1)
			case "anyOf", "$defs", "definitions":
				switch x := e.(type) {
				case []any:
					for _, s := range x {
						walk(s, depth, budget-1)
					}
				case map[string]any:
					for _, s := range x {
						walk(s, depth, budget-1)
					}
				}
			}
		}
	}
	walk(root, 0, maxDepth)
	return props, enums, deepest
}

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

// TestLimitCountsSkipOnlyLeaves: strict mode's counts of properties, enum
// values and nesting, taken with the leaves the compiler recorded read
// only for their enum, equal the counts of a walk that reads every node,
// on the corpus, the hard cases, schemas of leaves of every kind, and one
// nested deeper than the walk goes. It fails if the compiler records a
// schema that holds more than a leaf, or one that changes after.
func TestLimitCountsSkipOnlyLeaves(t *testing.T) {
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
	deep := `{"type":"string","enum":["a","b"]}`
	for range maxDepth + 2 {
		deep = `{"type":"object","properties":{"a":` + deep + `,"b":{"type":"integer","enum":[1,2]}},"required":["b"]}`
	}
	docs = append(docs, decode(t, deep))
	recorded := 0
	for _, doc := range docs {
		c := newCompiler()
		out, _ := c.run(OpenAIStrict, doc, false)
		recorded += len(c.leaves)
		p, e, d := c.limitCounts(out)
		wp, we, wd := fullLimitCounts(out)
		if p != wp || e != we || d != wd {
			t.Errorf("counts with recorded leaves: %d properties, %d enum values, depth %d; a full walk: %d, %d, %d\nschema %s", p, e, d, wp, we, wd, textclip.Clip(encode(t, out), 600))
		}
	}
	if recorded < 500 {
		t.Errorf("%d leaves recorded in all: the shortcut is hardly taken", recorded)
	}
}

// TestLeafSet: the compiler's set of leaves holds the maps it was given,
// each once, and no other map, equal or not, until release empties it.
func TestLeafSet(t *testing.T) {
	c := newCompiler()
	var in, out []map[string]any
	for i := range 3000 {
		m := map[string]any{"i": i}
		if i%3 == 0 {
			c.addLeaf(m)
			c.addLeaf(m) // twice: held once
			in = append(in, m)
		} else {
			out = append(out, m)
		}
	}
	if len(c.leaves) != len(in) {
		t.Fatalf("%d leaves held, want %d", len(c.leaves), len(in))
	}
	if i := slices.IndexFunc(in, func(m map[string]any) bool { return !c.isLeaf(m) }); i >= 0 {
		t.Fatalf("added leaf %d not found", i)
	}
	if i := slices.IndexFunc(out, c.isLeaf); i >= 0 {
		t.Fatalf("leaf %d found but never added", i)
	}
	if c.isLeaf(map[string]any{"i": 0}) {
		t.Fatal("a map equal to a leaf is found as the leaf")
	}
	c.release()
	if slices.ContainsFunc(in, c.isLeaf) {
		t.Fatal("released, the set still holds leaves")
	}
}

// FuzzStrictLimitCounts: for any input, the counts strict mode takes with
// the leaves the compiler recorded equal a full walk's.
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
		p, e, d := c.limitCounts(out)
		if wp, we, wd := fullLimitCounts(out); p != wp || e != we || d != wd {
			t.Fatalf("counts with recorded leaves: %d, %d, %d; a full walk: %d, %d, %d", p, e, d, wp, we, wd)
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
