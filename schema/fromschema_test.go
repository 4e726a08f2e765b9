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
