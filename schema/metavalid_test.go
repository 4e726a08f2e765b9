package schema

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/jsonschema"
)

// metaSchemaAccepts checks text against the meta-schema the long way (no
// TrustMeta): false when the meta-schema rejects it.
func metaSchemaAccepts(t testing.TB, text string) bool {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(lenientRegexp)
	c.AssertFormat()
	if err := c.AddResource(resourceURL, doc); err != nil {
		t.Fatal(err)
	}
	_, err = c.Compile(resourceURL)
	var sve *jsonschema.SchemaValidationError
	return !errors.As(err, &sve)
}

func metaValidText(t testing.TB, text string) bool {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return metaValid(doc)
}

// metaValidCases: schemas metaValid must trust (the shapes tool schemas are
// made of, so that their first call skips the meta-schema's compile) and
// schemas it must leave to the meta-schema (which rejects them, or whose
// check it does not make).
var metaValidCases = []struct {
	schema  string
	trusted bool
}{
	{`{"type":"object","properties":{"query":{"type":"string","description":"What to look for.","minLength":1},"maxResults":{"type":"integer","default":6,"minimum":1,"maximum":50}},"required":["query"],"additionalProperties":false}`, true},
	{`true`, true},
	{`false`, true},
	{`{}`, true},
	{`{"type":["string","null"],"enum":["a",null],"title":"T","examples":[1],"deprecated":true}`, true},
	{`{"type":"array","items":{"type":"number","multipleOf":0.5,"exclusiveMinimum":-1},"minItems":0,"maxItems":3,"uniqueItems":true}`, true},
	{`{"anyOf":[{"type":"string","format":"date-time"},{"not":{"const":3}}],"oneOf":[true],"allOf":[{}]}`, true},
	{`{"type":"object","additionalProperties":{"type":"string"},"minProperties":1,"maxProperties":10,"$comment":"c","readOnly":false,"writeOnly":false}`, true},

	// The meta-schema rejects these.
	{`{"type":"str"}`, false},
	{`{"type":[]}`, false},
	{`{"type":["string","string"]}`, false},
	{`{"type":3}`, false},
	{`{"required":"query"}`, false},
	{`{"required":["a","a"]}`, false},
	{`{"required":[1]}`, false},
	{`{"minLength":-1}`, false},
	{`{"minLength":1.5}`, false},
	{`{"maxItems":"3"}`, false},
	{`{"minimum":"0"}`, false},
	{`{"multipleOf":0}`, false},
	{`{"multipleOf":-2}`, false},
	{`{"properties":{"a":3}}`, false},
	{`{"properties":[]}`, false},
	{`{"items":[{"type":"string"}]}`, false},
	{`{"additionalProperties":"no"}`, false},
	{`{"anyOf":[]}`, false},
	{`{"enum":"a"}`, false},
	{`{"description":3}`, false},
	{`{"format":1}`, false},
	{`{"uniqueItems":"yes"}`, false},
	{`{"properties":{"a":{"type":"object","properties":{"b":{"minItems":-3}}}}}`, false},
	{`3`, false},
	{`"object"`, false},
	{`null`, false},

	// Left to the meta-schema, which accepts them.
	{`{"pattern":"^a+$"}`, false},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"}`, false},
	{`{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, false},
	{`{"nullable":true}`, false},
	{`{"minLength":1.0}`, false},
}

// TestMetaValidOnlyWhenTheMetaSchemaAccepts holds metaValid to the
// meta-schema: what it trusts, the meta-schema accepts, on the cases above
// and on every schema of the corpus; and it trusts what tool schemas are
// usually made of.
func TestMetaValidOnlyWhenTheMetaSchemaAccepts(t *testing.T) {
	t.Parallel()
	for _, c := range metaValidCases {
		if got := metaValidText(t, c.schema); got != c.trusted {
			t.Errorf("metaValid(%s) = %v, want %v", c.schema, got, c.trusted)
		}
		if c.trusted && !metaSchemaAccepts(t, c.schema) {
			t.Errorf("metaValid trusts %s, which the meta-schema rejects", c.schema)
		}
	}
	trusted := 0
	tools := loadCorpus(t)
	for _, tl := range tools {
		text := encode(t, tl.Doc)
		if !metaValidText(t, text) {
			continue
		}
		trusted++
		if !metaSchemaAccepts(t, text) {
			t.Errorf("%s/%s: metaValid trusts a schema the meta-schema rejects: %s", tl.Server, tl.Name, text)
		}
	}
	if trusted == 0 {
		t.Errorf("metaValid trusts none of the %d corpus schemas: it spares nothing", len(tools))
	}
	t.Logf("trusted %d of %d corpus schemas", trusted, len(tools))
}

// TestTrustedCompileReportsTheSameErrors: CompileJSON with the trust fails
// exactly where the meta-schema check fails.
func TestTrustedCompileReportsTheSameErrors(t *testing.T) {
	t.Parallel()
	for _, c := range metaValidCases {
		_, err := CompileJSON([]byte(c.schema))
		if accepted := metaSchemaAccepts(t, c.schema); accepted != (err == nil) {
			t.Errorf("CompileJSON(%s): err %v, the meta-schema accepts it: %v", c.schema, err, accepted)
		}
	}
}

// FuzzMetaValid: metaValid never trusts a schema the meta-schema rejects.
func FuzzMetaValid(f *testing.F) {
	for _, c := range metaValidCases {
		f.Add(c.schema)
	}
	for _, tl := range loadCorpus(f) {
		f.Add(encode(f, tl.Doc))
	}
	f.Fuzz(func(t *testing.T, text string) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
		if err != nil || !metaValid(doc) {
			return
		}
		if !metaSchemaAccepts(t, text) {
			t.Errorf("metaValid trusts a schema the meta-schema rejects: %s", text)
		}
	})
}
