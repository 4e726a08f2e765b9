package schema

import (
	"encoding/json"
	"reflect"
	"testing"

	gschema "github.com/google/jsonschema-go/jsonschema"
)

// roundTrip is the generic form of s the slow way, which fromSchema must
// give without it: json.Marshal through jsonschema-go's encoder, then Decode.
func roundTrip(tb testing.TB, s *gschema.Schema) any {
	tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	v, err := Decode(b)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func checkFromSchema(t *testing.T, name string, s *gschema.Schema) {
	t.Helper()
	got, ok := fromSchema(s)
	if !ok {
		t.Errorf("%s: fromSchema declined a schema the encoder takes", name)
		return
	}
	if want := roundTrip(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", name, encode(t, got), encode(t, want))
	}
}

// TestFromSchemaIsTheRoundTrip: for every corpus schema (decoded into
// jsonschema-go's type as an MCP client decodes it), schemas inferred from
// Go types, and one that sets every field, the direct conversion gives the
// generic form the JSON round trip gives, value for value.
func TestFromSchemaIsTheRoundTrip(t *testing.T) {
	for _, c := range loadCorpus(t) {
		b, err := Encode(c.Doc)
		if err != nil {
			t.Fatal(err)
		}
		var s gschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s/%s: %v", c.Server, c.Name, err)
		}
		checkFromSchema(t, c.Server+"/"+c.Name, &s)
	}

	type inner struct {
		N float64 `json:"n" jsonschema:"a number"`
	}
	type typed struct {
		Path    string            `json:"path" jsonschema:"the file"`
		Limit   *int              `json:"limit,omitempty"`
		Tags    []string          `json:"tags,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		Inner   inner             `json:"inner"`
		Many    []inner           `json:"many"`
		Flag    bool              `json:"flag"`
		Pointer *inner            `json:"pointer,omitempty"`
	}
	inferred, err := gschema.For[typed](nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFromSchema(t, "inferred", inferred)

	one, two, small, big := 1.0, 2.5, 1e-7, 1e21
	n1, n2 := 1, 3
	var constant any = map[string]any{"a": []any{1.0, "x", nil, true}}
	full := &gschema.Schema{
		ID: "urn:x", Schema: "https://json-schema.org/draft/2020-12/schema", Ref: "#/$defs/a", Comment: "c",
		Defs:              map[string]*gschema.Schema{"a": {Type: "string"}, "t": {}, "f": {Not: &gschema.Schema{}}},
		DependencySchemas: map[string]*gschema.Schema{"x": {Required: []string{"y"}}},
		DependencyStrings: map[string][]string{"y": {"z"}},
		Anchor:            "an", DynamicAnchor: "da", DynamicRef: "#da",
		Vocabulary: map[string]bool{"v": true, "w": false},
		Title:      "T <b>&", Description: "D", Default: json.RawMessage(`{"k": [1, 2.50, "s"]}`),
		Deprecated: true, ReadOnly: true, WriteOnly: true, Examples: []any{1, "e", map[string]any{"q": 1.5}},
		Types: []string{"object", "null"}, Enum: []any{1.0, int64(2), "three", nil}, Const: &constant,
		MultipleOf: &one, Minimum: &small, Maximum: &big, ExclusiveMinimum: &two, ExclusiveMaximum: &two,
		MinLength: &n1, MaxLength: &n2, Pattern: "^a+$",
		PrefixItems: []*gschema.Schema{{Type: "integer"}}, ItemsArray: []*gschema.Schema{{Type: "boolean"}},
		MinItems: &n1, MaxItems: &n2, AdditionalItems: &gschema.Schema{}, UniqueItems: true,
		Contains: &gschema.Schema{Type: "number"}, MinContains: &n1, MaxContains: &n2,
		UnevaluatedItems: &gschema.Schema{Not: &gschema.Schema{}},
		MinProperties:    &n1, MaxProperties: &n2, Required: []string{"a"},
		DependentRequired:     map[string][]string{"a": {"b", "c"}},
		Properties:            map[string]*gschema.Schema{"a": {Type: "string", Format: "uri"}, "b": nil},
		PatternProperties:     map[string]*gschema.Schema{"^x": {Type: "integer"}},
		AdditionalProperties:  &gschema.Schema{Type: "string"},
		PropertyNames:         &gschema.Schema{MaxLength: &n2},
		UnevaluatedProperties: &gschema.Schema{},
		AllOf:                 []*gschema.Schema{{Title: "a"}}, AnyOf: []*gschema.Schema{{Title: "b"}}, OneOf: []*gschema.Schema{{Title: "c"}},
		Not: &gschema.Schema{Type: "array"}, If: &gschema.Schema{Required: []string{"a"}}, Then: &gschema.Schema{}, Else: &gschema.Schema{},
		DependentSchemas: map[string]*gschema.Schema{"d": {Type: "object"}},
		ContentEncoding:  "base64", ContentMediaType: "image/png", ContentSchema: &gschema.Schema{Type: "string"},
		Extra: map[string]any{"x-order": 3, "discriminator": map[string]any{"propertyName": "kind"}},
	}
	checkFromSchema(t, "every field", full)
	checkFromSchema(t, "empty properties", &gschema.Schema{Type: "object", Properties: map[string]*gschema.Schema{}})
	checkFromSchema(t, "empty types", &gschema.Schema{Types: []string{}})
	checkFromSchema(t, "true", &gschema.Schema{})
	checkFromSchema(t, "false", &gschema.Schema{Not: &gschema.Schema{}})

	// What the encoder refuses, FromSchema refuses too (it takes the round trip).
	for name, s := range map[string]*gschema.Schema{
		"Type and Types":   {Type: "string", Types: []string{"string"}},
		"Extra is a field": {Extra: map[string]any{"title": "x"}},
		"Extra is type":    {Extra: map[string]any{"type": "x"}},
	} {
		if _, err := FromSchema(s); err == nil {
			t.Errorf("%s: FromSchema gave no error", name)
		}
	}
}

func BenchmarkFromSchema(b *testing.B) {
	var schemas []*gschema.Schema
	for _, c := range loadCorpus(b) {
		bs, _ := Encode(c.Doc)
		var s gschema.Schema
		if err := json.Unmarshal(bs, &s); err != nil {
			b.Fatal(err)
		}
		schemas = append(schemas, &s)
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if _, err := FromSchema(s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("roundtrip", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				roundTrip(b, s)
			}
		}
	})
}

// slowToSchema is ToSchema the slow way: the JSON round trip.
func slowToSchema(tb testing.TB, v any) (*gschema.Schema, error) {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var s gschema.Schema
	err = json.Unmarshal(b, &s)
	return &s, err
}

// TestToSchemaIsTheRoundTrip: for every corpus schema, decoded with float64
// numbers (as the MCP SDK decodes a tool list) and with json.Number, and
// for schemas with every keyword, odd values and nulls, the direct
// conversion gives what json.Unmarshal of the JSON gives, and fails where
// it fails.
func TestToSchemaIsTheRoundTrip(t *testing.T) {
	check := func(name string, v any) {
		t.Helper()
		got, err := ToSchema(v)
		want, werr := slowToSchema(t, v)
		if (err == nil) != (werr == nil) {
			t.Errorf("%s: error %v, the round trip's %v", name, err, werr)
			return
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", name, gb, wb)
		}
	}
	direct, corpus := 0, loadCorpus(t)
	for _, c := range corpus {
		b, err := Encode(c.Doc)
		if err != nil {
			t.Fatal(err)
		}
		var floats any
		if err := json.Unmarshal(b, &floats); err != nil {
			t.Fatal(err)
		}
		check(c.Server+"/"+c.Name+" (float64)", floats)
		check(c.Server+"/"+c.Name+" (json.Number)", c.Doc)
		if _, ok := toSchema(floats); ok {
			direct++
		}
	}
	if direct < len(corpus)*9/10 {
		t.Errorf("%d of %d corpus schemas took the direct way", direct, len(corpus))
	}
	decode := func(s string) any {
		v, err := Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, s := range []string{
		`{"$id":"urn:x","$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"#/$defs/a","$comment":"c",
		  "$defs":{"a":{"type":"string"},"t":true,"f":false},"definitions":{"b":{}},
		  "dependencies":{"x":{"required":["y"]},"y":["z"]},"$anchor":"an","$dynamicAnchor":"da","$dynamicRef":"#da",
		  "$vocabulary":{"v":true,"w":false},"title":"T <b>&","description":"D","default":{"k":[1,2.5,"s<"]},
		  "deprecated":true,"readOnly":false,"writeOnly":true,"examples":[1,"e",{"q":1.5}],
		  "type":["object","null"],"enum":[1,2,"three",null],"const":{"a":[1,"x",null,true]},
		  "multipleOf":1,"minimum":1e-7,"maximum":1e21,"exclusiveMinimum":2.5,"exclusiveMaximum":3,
		  "minLength":1,"maxLength":3.0,"pattern":"^a+$","prefixItems":[{"type":"integer"}],"items":[{"type":"boolean"}],
		  "minItems":0,"maxItems":2,"additionalItems":true,"uniqueItems":true,"contains":{"type":"number"},
		  "minContains":1,"maxContains":2,"unevaluatedItems":false,"minProperties":1,"maxProperties":2,
		  "required":["a"],"dependentRequired":{"a":["b","c"]},"properties":{"a":{"type":"string","format":"uri"}},
		  "patternProperties":{"^x":{"type":"integer"}},"additionalProperties":{"type":"string"},
		  "propertyNames":{"maxLength":3},"unevaluatedProperties":{},"allOf":[{"title":"a"}],"anyOf":[{"title":"b"}],
		  "oneOf":[{"title":"c"}],"not":{"type":"array"},"if":{"required":["a"]},"then":{},"else":{},
		  "dependentSchemas":{"d":{"type":"object"}},"contentEncoding":"base64","contentMediaType":"image/png",
		  "contentSchema":{"type":"string"},"x-order":3,"discriminator":{"propertyName":"kind"}}`,
		`true`, `false`, `{}`, `{"not":{}}`, `{"items":{"type":"string"}}`, `{"items":true}`,
		`{"title":null,"description":null,"required":null,"enum":null,"properties":null,"minLength":null,"minimum":null,"const":null,"default":null,"x":null}`,
		`{"items":null}`, `{"type":null}`, `{"dependencies":{"a":null}}`, `{"properties":{"a":null}}`, `{"allOf":[null]}`,
		`{"minLength":1.5}`, `{"minLength":1e10}`, `{"minLength":-3}`, `{"maxItems":"2"}`, `{"title":5}`, `{"type":5}`,
		`{"type":["string",5]}`, `{"required":["a",1]}`, `{"properties":[]}`, `{"properties":{"a":5}}`, `{"$vocabulary":{"a":1}}`,
		`{"dependentRequired":{"a":"b"}}`, `{"uniqueItems":"yes"}`, `{"enum":{"a":1}}`, `5`, `"s"`, `null`, `[]`,
	} {
		check(s, decode(s))
		var floats any
		if err := json.Unmarshal([]byte(s), &floats); err != nil {
			t.Fatal(err)
		}
		check(s+" (float64)", floats)
	}
}
