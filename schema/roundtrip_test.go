package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// bothWays is FromSchema(ToSchema(v)).
func bothWays(v any) (any, error) {
	s, err := ToSchema(v)
	if err != nil {
		return nil, err
	}
	return FromSchema(s)
}

// checkRoundTrips fails when roundTrips(v) says v comes back unchanged and
// it does not, or when RoundTripForm gives a form that is not what comes
// back, or whose schema is not v's, or changes v; it returns what
// roundTrips said.
func checkRoundTrips(t testing.TB, name string, v any) bool {
	t.Helper()
	before, _ := json.Marshal(v)
	form, ok := RoundTripForm(v)
	if after, _ := json.Marshal(v); string(after) != string(before) {
		t.Fatalf("%s: RoundTripForm changed its input:\n%s\nto %s", name, before, after)
	}
	if ok {
		got, err := bothWays(v)
		if err != nil {
			t.Errorf("%s: a form, but the conversions fail: %v", name, err)
			return roundTrips(v)
		}
		if !reflect.DeepEqual(got, form) {
			gb, _ := json.Marshal(got)
			fb, _ := json.Marshal(form)
			t.Errorf("%s: comes back as\n%s\nnot as its form\n%s", name, gb, fb)
		}
		want, _ := ToSchema(v)
		if s, err := ToSchema(form); err != nil || !reflect.DeepEqual(s, want) {
			t.Errorf("%s: the form's schema is not v's (%v)", name, err)
		}
	}
	if ok != roundTrips(v) && !changed(form, v) {
		t.Errorf("%s: roundTrips %v, but RoundTripForm gives it back unchanged: %v", name, roundTrips(v), ok)
	}
	if !roundTrips(v) {
		return false
	}
	got, err := bothWays(v)
	if err != nil {
		t.Errorf("%s: roundTrips, but the conversions fail: %v", name, err)
		return true
	}
	if !reflect.DeepEqual(got, v) {
		gb, _ := json.Marshal(got)
		vb, _ := json.Marshal(v)
		t.Errorf("%s: roundTrips, but comes back changed:\n got %s\nwant %s", name, gb, vb)
	}
	return true
}

// subschemas calls f with every object and boolean below v (v included).
func subschemas(v any, f func(any)) {
	f(v)
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			subschemas(e, f)
		}
	case []any:
		for _, e := range x {
			subschemas(e, f)
		}
	}
}

// TestRoundTripsIsTheRoundTrip: whenever roundTrips says a schema comes
// back from ToSchema and FromSchema unchanged, it does — on every corpus
// schema and every value inside one, on every keyword, and on odd inputs
// — and it says so for most corpus schemas (the point of it), and not for
// the ones the conversions change.
func TestRoundTripsIsTheRoundTrip(t *testing.T) {
	corpus := loadCorpus(t)
	kept := 0
	for _, c := range corpus {
		if checkRoundTrips(t, c.Server+"/"+c.Name, c.Doc) {
			kept++
		}
		subschemas(c.Doc, func(v any) { checkRoundTrips(t, c.Server+"/"+c.Name+" (inside)", v) })
	}
	if kept < len(corpus)*3/4 {
		t.Errorf("roundTrips holds for %d of %d corpus schemas", kept, len(corpus))
	}
	forms := 0
	for _, c := range corpus {
		if _, ok := RoundTripForm(c.Doc); ok {
			forms++
		}
	}
	if forms < len(corpus)*9/10 {
		t.Errorf("RoundTripForm gives a form for %d of %d corpus schemas", forms, len(corpus))
	}
	// The forms of the schemas the type writes as booleans.
	for _, c := range []struct{ json, form string }{
		{`{}`, `true`},
		{`{"not":true}`, `false`},
		{`{"not":{}}`, `false`},
		{`{"type":"object","properties":{"a":{},"b":{"type":"string"}},"additionalProperties":{}}`, `{"additionalProperties":true,"properties":{"a":true,"b":{"type":"string"}},"type":"object"}`},
		{`{"anyOf":[{"type":"string"},{}],"items":{"not":{}}}`, `{"anyOf":[{"type":"string"},true],"items":false}`},
		{`{"$defs":{"a":{"properties":{"x":{}}}}}`, `{"$defs":{"a":{"properties":{"x":true}}}}`},
	} {
		v, err := Decode([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		form, ok := RoundTripForm(v)
		b, _ := Encode(form)
		if !ok || string(b) != c.form {
			t.Errorf("RoundTripForm(%s) = %s, %v; want %s", c.json, b, ok, c.form)
		}
		checkRoundTrips(t, c.json, v)
	}
	cases := []struct {
		json string
		want bool
	}{
		{`{"type":"object"}`, true},
		{`true`, true},
		{`false`, true},
		{`{"type":"object","properties":{}}`, true},
		{`{"type":"object","properties":{"a":true,"b":false}}`, true},
		{`{"type":["string","null"],"enum":["a",null,1,2.5,true,{"k":[1]}]}`, true},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10,"multipleOf":0.5,"exclusiveMinimum":-1,"exclusiveMaximum":11,"default":3}},"required":["n"],"additionalProperties":false}`, true},
		{`{"type":"string","minLength":1,"maxLength":64,"pattern":"^a","format":"uuid","title":"T","description":"D","default":"<a & b>","examples":["x"],"const":"x","deprecated":true,"readOnly":true,"writeOnly":true,"$comment":"c","contentEncoding":"base64","contentMediaType":"text/plain"}`, true},
		{`{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3,"uniqueItems":true,"contains":{"const":1},"minContains":1,"maxContains":2,"prefixItems":[{"type":"string"}],"unevaluatedItems":false}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","$anchor":"a","$defs":{"d":{"type":"string"}},"allOf":[{"$ref":"#/$defs/d"}],"anyOf":[{"type":"string"}],"oneOf":[{"type":"string"}],"not":{"type":"null"},"if":{"type":"string"},"then":{"minLength":1},"else":{"maxLength":2},"$dynamicAnchor":"n","$dynamicRef":"#n"}`, true},
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}},"propertyNames":{"pattern":"^[a-z]"},"minProperties":1,"maxProperties":9,"dependentRequired":{"a":["b"]},"dependentSchemas":{"a":{"required":["c"]}},"unevaluatedProperties":false,"definitions":{"e":{"type":"integer"}}}`, true},
		{`{"type":"object","x-extra":{"n":[1,2.5,null,"s"]},"nullable":true,"discriminator":{"propertyName":"kind"}}`, true},
		{`{"type":"string","default":null}`, true},
		{`{"contentSchema":{"type":"object"}}`, true},
		// What the conversions change, or this does not follow.
		{`{}`, false},
		{`{"not":true}`, false},
		{`{"type":"object","properties":{"a":{}}}`, false},
		{`{"type":""}`, false},
		{`{"type":[]}`, false},
		{`{"type":"string","description":""}`, false},
		{`{"type":"object","required":[]}`, false},
		{`{"type":"object","$defs":{}}`, false},
		{`{"type":"object","$defs":{"a":true},"definitions":{"b":true}}`, false},
		{`{"anyOf":[]}`, false},
		{`{"type":"array","uniqueItems":false}`, false},
		{`{"type":"number","minimum":1.0}`, false},
		{`{"type":"number","maximum":1e3}`, false},
		{`{"type":"string","maxLength":1.0}`, false},
		{`{"type":"string","enum":[1.50]}`, false},
		{`{"type":"integer","enum":[12345678901234567890]}`, false},
		{`{"type":"object","x-extra":1e2}`, false},
		{`{"type":"array","items":[{"type":"string"}]}`, false},
		{`{"type":"object","dependencies":{"a":["b"]}}`, false},
		{`{"$vocabulary":{"x":true}}`, false},
		{`{"const":null}`, false},
		{`{"type":"object","required":[1]}`, false},
		{`{"type":"object","properties":{"a":{"not":true}}}`, false},
		{`{"type":"object","properties":{"a":null}}`, false},
		{`{"dependentRequired":{"a":[]}}`, false},
		{`{"enum":[]}`, false},
	}
	for _, c := range cases {
		v, err := Decode([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := checkRoundTrips(t, c.json, v); got != c.want {
			t.Errorf("RoundTrips(%s) = %v, want %v", c.json, got, c.want)
		}
		subschemas(v, func(v any) { checkRoundTrips(t, c.json+" (inside)", v) })
	}
	// Numbers decoded as float64 are not followed.
	var floats any
	if err := json.Unmarshal([]byte(`{"type":"integer","minimum":1}`), &floats); err != nil {
		t.Fatal(err)
	}
	if roundTrips(floats) {
		t.Error("roundTrips holds for float64 numbers")
	}
}

func FuzzRoundTrips(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"integer","minimum":0}}}`, `{"enum":[1,"a",null]}`, `false`, `{"x":{"y":[1.5]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			return
		}
		if _, ok := RoundTripForm(v); !ok {
			return
		}
		checkRoundTrips(t, string(b), v) // fails when ToSchema does too
	})
}

// roundTrips reports whether v, a schema in generic JSON form with numbers
// as json.Number (see [Decode]), is deep-equal to FromSchema(ToSchema(v)):
// every keyword in it is one jsonschema-go's type keeps as written (no
// empty string, list or map it drops, no false flag, no {} it writes as
// true), and every number is written as FromSchema writes it. It is
// conservative: false for anything it does not follow, such as numbers
// decoded as float64. When it holds, ToSchema succeeds.
// TestRoundTripsIsTheRoundTrip and FuzzRoundTrips hold it to the two
// conversions.
func roundTrips(v any) bool {
	form, ok := RoundTripForm(v)
	return ok && !changed(form, v)
}
