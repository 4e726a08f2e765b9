package schema

import (
	"slices"
	"testing"
)

// containerCases are objects and arrays on each side of the line
// simpleContainer draws: simple ones, and ones with one keyword or shape
// that some pass before children must see.
var containerCases = []string{
	`{"type":"object"}`, `{"type":"object","properties":{}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`,
	`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"object","properties":{"c":{"type":"integer"}}}},"required":["a"],"additionalProperties":false}`,
	`{"type":"object","properties":"x"}`, `{"type":"object","properties":{"a":false}}`, `{"type":"object","properties":{"a":true}}`,
	`{"type":"object","additionalProperties":"x"}`, `{"type":"object","additionalProperties":{"type":"string"}}`,
	`{"type":"object","additionalProperties":true,"properties":{"a":{}}}`, `{"type":"object","required":"a"}`,
	`{"type":"object","required":["a","a",1],"properties":{"a":{}}}`, `{"type":"object","required":["z"],"properties":{"a":{}}}`,
	`{"type":"object","const":{}}`, `{"type":"object","enum":[{}]}`, `{"type":"object","nullable":true,"properties":{"a":{}}}`,
	`{"type":["object","null"],"properties":{"a":{}}}`, `{"type":"object","$ref":"#/$defs/x"}`, `{"type":"object","anyOf":[{"properties":{"a":{}}},{"type":"null"}]}`,
	`{"type":"object","allOf":[{"properties":{"a":{}}}]}`, `{"type":"object","oneOf":[{"type":"string"},{"properties":{"a":{}}}]}`,
	`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, `{"type":"object","propertyNames":{"pattern":"^a"}}`,
	`{"type":"object","properties":{"a":{}},"title":"T","description":"D","$comment":"c","default":{"a":"x"},"$schema":"s"}`,
	`{"type":"object","properties":{"a":{}},"items":{"type":"string"}}`, `{"type":"object","items":[{"type":"string"}]}`,
	`{"type":"object","minProperties":1}`, `{"type":"object","x-extra":1,"properties":{"a":{}}}`, `{"type":"Object"}`,
	`{"type":"array"}`, `{"type":"array","items":{"type":"string"}}`, `{"type":"array","items":[{"type":"string"}]}`,
	`{"type":"array","items":true}`, `{"type":"array","items":false}`, `{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3,"default":[]}`,
	`{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `{"type":"array","items":{},"uniqueItems":true}`,
	`{"type":"array","items":{"type":"string"},"additionalItems":false}`, `{"type":"array","items":{"type":"string"},"description":"D","title":"T"}`,
	`{"type":"array","minItems":2}`, `{"type":"array","items":{"type":"string"},"contains":{"const":"a"}}`, `{"type":"array","items":{"$ref":"#/$defs/x"}}`,
	`{"type":"array","items":{"type":"object","properties":{"a":{"type":"string","default":"x"}},"additionalProperties":{"type":"integer"}}}`,
	`{"type":"array","items":{"type":"string"},"nullable":true}`, `{"type":"array","items":{"type":"string"},"enum":[["a"]]}`,
}

// TestSimpleContainersCompileAsBefore: objects and arrays that go from
// the clone straight to children (see simpleContainer) compile to the
// schema and report that every pass gives, as properties (optional and
// required), as items, and as the root, in every dialect. Widening the
// test of simpleContainer to any of the other cases makes it fail.
func TestSimpleContainersCompileAsBefore(t *testing.T) {
	defs := `"$defs":{"x":{"type":"object","properties":{"d":{"type":"string"}}}}`
	var docs []string
	for _, s := range containerCases {
		docs = append(docs,
			`{"type":"object","properties":{"p":`+s+`},"required":["p"],`+defs+`}`,
			`{"type":"object","properties":{"p":`+s+`,"q":{"type":"array","items":`+s+`}},`+defs+`}`,
			s)
	}
	for _, d := range append(testDialects(), Compat("additionalProperties", "items", "required"), Compat("type", "title", "$schema")) {
		for _, s := range docs {
			doc := decode(t, s)
			fast, fastRep := d.compile(doc, false)
			slow, slowRep := d.compile(doc, true)
			if a, b := encode(t, fast), encode(t, slow); a != b {
				t.Errorf("%s: %s\nthe shortcut compiled %s\nthe passes %s", d.Name(), s, a, b)
			}
			if a, b := fastRep.String(), slowRep.String(); a != b {
				t.Errorf("%s: %s\nthe shortcut reported\n%s\nthe passes\n%s", d.Name(), s, a, b)
			}
		}
	}
}

// TestSimpleContainerKeys: bit i of simpleContainer's set stands for
// simpleKeys[i], which are sorted (strip takes them as its sorted list of
// keys to remove), and simplePresent gives present's mask.
func TestSimpleContainerKeys(t *testing.T) {
	if !slices.IsSorted(simpleKeys[:]) {
		t.Fatalf("simpleKeys not sorted: %q", simpleKeys)
	}
	value := map[string]any{"properties": map[string]any{}, "items": map[string]any{}, "additionalProperties": false}
	typeBit := uint16(1) << slices.Index(simpleKeys[:], "type")
	all := map[string]any{}
	for i, k := range simpleKeys {
		v, ok := value[k]
		if !ok {
			v = "x"
		}
		m := map[string]any{"type": "object", k: v}
		if k == "type" {
			m[k] = "object"
		}
		all[k] = m[k]
		if got, want := simpleContainer(m), uint16(1)<<i|typeBit; got != want {
			t.Errorf("%s: keys %b, want %b", k, got, want)
		}
		if got, want := simplePresent(simpleContainer(m)), present(m); got != want {
			t.Errorf("%s: simplePresent %b, present %b", k, got, want)
		}
	}
	if got, want := simplePresent(simpleContainer(all)), present(all); got != want || simpleContainer(all) != 1<<len(simpleKeys)-1 {
		t.Errorf("all keys: simplePresent %b, present %b, keys %b", got, want, simpleContainer(all))
	}
	for _, m := range []map[string]any{{"type": "object", "x": 1}, {"type": "object", "items": true}, {"type": "object", "properties": []any{}}, {"type": "object", "additionalProperties": 1}} {
		if simpleContainer(m) != 0 {
			t.Errorf("%v taken as a simple container", m)
		}
	}
}
