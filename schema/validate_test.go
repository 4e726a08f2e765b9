package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	gschema "github.com/google/jsonschema-go/jsonschema"
)

func mustCompile(t testing.TB, src string) *Validator {
	t.Helper()
	v, err := CompileJSON([]byte(src))
	if err != nil {
		t.Fatalf("compile %s: %v", src, err)
	}
	return v
}

func decode(t testing.TB, src string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", src, err)
	}
	return v
}

const editSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1},
		"edits": {"type": "array", "minItems": 1, "items": {
			"type": "object",
			"properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}, "replaceAll": {"type": "boolean"}},
			"required": ["oldText", "newText"],
			"additionalProperties": false
		}},
		"mode": {"enum": ["fast", "safe"]},
		"weird key": {"type": "integer"}
	},
	"required": ["path", "edits"],
	"additionalProperties": false
}`

func TestValidateReportsEveryErrorWithPaths(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, editSchema)
	args := decode(t, `{"path": "", "edits": [{"oldText": 1}, {"oldText": "a", "newText": "b", "extra": true}], "mode": "slow", "weird key": "x", "nope": 1}`)
	errs := v.Validate(args)
	var got []string
	for _, e := range errs {
		got = append(got, e.String())
	}
	want := []string{
		`(root): unknown property "nope" is not allowed`,
		`["weird key"]: got string, want integer`,
		`edits[0]: missing required property "newText"`,
		`edits[0].oldText: got number, want string`,
		`edits[1]: unknown property "extra" is not allowed; the properties left to set are "replaceAll"`,
		`mode: value must be one of "fast", "safe"`,
		`path: minLength: got 0 characters, want at least 1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUnknownPropertyHints: an unknown property names the declared one it
// most likely misspells — also inside a referenced definition and not one
// the object already has — or, failing that, the ones left to set.
func TestUnknownPropertyHints(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, `{
		"type": "object",
		"properties": {"path": {"type": "string"}, "pattern": {"type": "string"}, "limit": {"type": "integer"}, "opts": {"$ref": "#/$defs/opts"}},
		"additionalProperties": false,
		"$defs": {"opts": {"type": "object", "properties": {"ignoreCase": {"type": "boolean"}, "context": {"type": "integer"}}, "additionalProperties": false}}
	}`)
	for _, c := range []struct{ args, want string }{
		{`{"paht": "src"}`, `(root): unknown property "paht" is not allowed; did you mean "path"?`},
		{`{"path": "src", "Path": "x"}`, `(root): unknown property "Path" is not allowed; the properties left to set are "limit", "opts", "pattern"`},
		{`{"paht": "src", "lmit": 3, "zzz": 1}`, `(root): unknown properties "lmit", "paht", "zzz" are not allowed; did you mean "limit" for "lmit", "path" for "paht"?`},
		{`{"opts": {"ignore_case": true}}`, `opts: unknown property "ignore_case" is not allowed; did you mean "ignoreCase"?`},
		{`{"path": "", "pattern": "", "limit": 1, "opts": {}, "x": 1}`, `(root): unknown property "x" is not allowed`},
	} {
		errs := v.Validate(decode(t, c.args))
		if len(errs) != 1 || errs[0].String() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.args, errs, c.want)
		}
	}
}

func TestValidateValid(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, editSchema)
	if errs := v.Validate(decode(t, `{"path": "a.go", "edits": [{"oldText": "a", "newText": "b"}]}`)); errs != nil {
		t.Errorf("valid arguments rejected: %v", errs)
	}
}

func TestValidateMissingSeveral(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, editSchema)
	errs := v.Validate(decode(t, `{}`))
	if len(errs) != 1 || errs[0].Message != `missing required properties "path", "edits"` {
		t.Errorf("got %v", errs)
	}
}

func TestValidateAnyOfNamesAlternatives(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, `{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"integer","minimum":3}]}}}`)
	errs := v.Validate(decode(t, `{"x": 1}`))
	if len(errs) != 1 {
		t.Fatalf("got %v", errs)
	}
	if errs[0].Path != "x" || !strings.Contains(errs[0].Message, "got number, want string") || !strings.Contains(errs[0].Message, "minimum: got 1, want at least 3") {
		t.Errorf("anyOf error does not name the alternatives: %v", errs[0])
	}
}

func TestCompileRefusesExternalReferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + secret, "https://example.com/schema.json", "other.json#/x"} {
		_, err := CompileJSON([]byte(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`))
		if err == nil || !strings.Contains(err.Error(), "not fetched") {
			t.Errorf("$ref %q: want a refusal, got %v", ref, err)
		}
	}
}

func TestCompileLocalReferences(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, `{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}`)
	if errs := v.Validate(decode(t, `{"a":"x"}`)); len(errs) != 1 || errs[0].Path != "a" {
		t.Errorf("got %v", errs)
	}
}

func TestCompileDropsUnknownMetaSchema(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, `{"$schema":"https://example.com/my-meta","type":"object","properties":{"a":{"type":"integer"}}}`)
	if errs := v.Validate(decode(t, `{"a":1}`)); errs != nil {
		t.Errorf("got %v", errs)
	}
}

func TestCompileDraft07(t *testing.T) {
	t.Parallel()
	// draft-07: items as an array is a tuple; exclusiveMinimum is a number.
	v := mustCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0}}}`)
	if errs := v.Validate(decode(t, `{"n":0}`)); len(errs) != 1 {
		t.Errorf("got %v", errs)
	}
}

func TestLenientPattern(t *testing.T) {
	t.Parallel()
	// Lookahead is not RE2: the pattern is not enforced rather than breaking the tool.
	v := mustCompile(t, `{"type":"object","properties":{"p":{"type":"string","pattern":"^(?!x).*$"}}}`)
	if errs := v.Validate(decode(t, `{"p":"xyz"}`)); errs != nil {
		t.Errorf("got %v", errs)
	}
	if !v.Accepts([]byte(`{"p":"xyz"}`)) {
		t.Error("fast path disagrees with the full validator on an unenforceable pattern")
	}
}

func TestCompileNilAndInferred(t *testing.T) {
	t.Parallel()
	v, err := Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	if errs := v.Validate(decode(t, `{"anything": 1}`)); errs != nil {
		t.Errorf("nil schema rejects: %v", errs)
	}
	s := &gschema.Schema{Type: "object", Properties: map[string]*gschema.Schema{"n": {Type: "integer"}}, Required: []string{"n"}}
	v, err = Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	if errs := v.Validate(decode(t, `{}`)); len(errs) != 1 {
		t.Errorf("got %v", errs)
	}
}

func TestCompileInvalidSchema(t *testing.T) {
	t.Parallel()
	for _, src := range []string{`{"type": 5}`, `{"properties": []}`, `not json`, `{"minLength": -1}`} {
		if _, err := CompileJSON([]byte(src)); err == nil {
			t.Errorf("%s: compiled", src)
		}
	}
}

func TestInstancePath(t *testing.T) {
	t.Parallel()
	root := decode(t, `{"a": [{"b c": {"d": 1}}], "0": {"x": 1}}`)
	for _, tc := range []struct {
		loc  []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "0"}, "a[0]"},
		{[]string{"a", "0", "b c", "d"}, `a[0]["b c"].d`},
		{[]string{"0", "x"}, `["0"].x`},
	} {
		if got := instancePath(tc.loc, root); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.loc, got, tc.want)
		}
	}
}

// compact re-encodes a JSON document without spaces.
func compact(t testing.TB, src string) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(src)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCompileConcurrently: the validator library compiles its meta-schemas
// on the first compile (internal/jsonschema, not at init); compiles that
// start together all wait for them and still check schemas against them.
func TestCompileConcurrently(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := CompileJSON([]byte(`{"minLength": -1}`)); err == nil {
				t.Error(`{"minLength": -1} compiled: the meta-schema was not applied`)
			}
			if _, err := CompileJSON([]byte(`{"type": "object", "properties": {"a": {"type": "string"}}}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
