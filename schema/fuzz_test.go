package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are schemas for the fuzzers to start from: the hard cases, the
// golden schemas, and pathological nesting and self-reference.
func fuzzSeeds(f *testing.F) []string {
	var seeds []string
	for _, tc := range hardCases {
		seeds = append(seeds, tc.schema)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 100) + `{}` + strings.Repeat(`}}`, 100)
	unions := strings.Repeat(`{"anyOf":[{"type":"string"},`, 50) + `{}` + strings.Repeat(`]}`, 50)
	return append(seeds, deep, unions,
		`{"$ref":"#"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"properties":{"x":{"allOf":[{"$ref":"#/properties/x"}]}}}`,
		`{"$defs":{"t":{"properties":{"l":{"$ref":"#/$defs/t"},"r":{"$ref":"#/$defs/t"}}}},"properties":{"x":{"$ref":"#/$defs/t"}}}`,
		`{"properties":{"x":{"anyOf":[{"$ref":"#/properties/x"},{"type":"null"}]}}}`,
		`{"type":["object","null"],"oneOf":[true,false,{"const":null}]}`,
	)
}

// FuzzCompile: no input makes the compiler panic, modify its input, emit
// a schema its provider rejects, lose a property silently, or produce a
// schema that compiles differently again.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := Decode(b)
		if err != nil {
			return
		}
		for _, d := range testDialects() {
			checkCompiled(t, d, doc)
		}
	})
}

// FuzzValidate: no schema and arguments make compiling, coercing or
// validating panic; coercion is idempotent, only changes what it reports,
// and the fast path never accepts what the full validator refuses.
func FuzzValidate(f *testing.F) {
	args := []string{`{}`, `{"count":"5","on":"true","list":["1"],"opt":null}`, `{"a":{"b":[1,"2",null]}}`, `{"n":"1","next":{"n":"2"}}`}
	for i, s := range append(fuzzSeeds(f), coerceSchema) {
		f.Add([]byte(s), []byte(args[i%len(args)]))
	}
	f.Fuzz(func(t *testing.T, schemaText, argText []byte) {
		v, err := CompileJSON(schemaText)
		if err != nil {
			return
		}
		decoded, err := Decode(argText)
		if err != nil {
			return
		}
		obj, isObject := decoded.(map[string]any)
		if v.Accepts(argText) && len(v.Validate(decoded)) > 0 {
			t.Fatalf("Accepts %s but Validate refuses it: %v", argText, v.Validate(decoded))
		}
		if !isObject {
			v.Validate(decoded)
			return
		}
		before := encode(t, obj)
		changes := v.Coerce(obj)
		if len(changes) == 0 && encode(t, obj) != before {
			t.Fatalf("Coerce changed %s to %s without saying so", before, encode(t, obj))
		}
		once := encode(t, obj)
		if again := v.Coerce(obj); len(again) > 0 {
			t.Fatalf("Coerce is not idempotent: %s, then %v", once, again)
		}
		for _, e := range v.Validate(obj) {
			if e.Message == "" {
				t.Fatalf("an error without a message at %q", e.Path)
			}
		}
		if _, err := json.Marshal(changes); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSettledLeaves: for any input, sharing settled leaves and taking
// plain leaves through the passes from strip on (see Dialect.leafKind)
// compiles to the same schema and report as sending them
// through every pass.
func FuzzSettledLeaves(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"properties":{"a":{"type":"string","enum":["x",null]},"b":{"type":"integer","format":"int64","minimum":0},"c":{"type":"boolean","title":"C"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := Decode(b)
		if err != nil {
			return
		}
		for _, d := range testDialects() {
			fast, fastRep := d.compile(doc, false)
			slow, slowRep := d.compile(doc, true)
			if a, b := encode(t, fast), encode(t, slow); a != b {
				t.Fatalf("%s: the shortcut compiled %s\nthe passes %s", d.Name(), a, b)
			}
			if a, b := fmt.Sprint(fastRep), fmt.Sprint(slowRep); a != b {
				t.Fatalf("%s: the shortcut reported %s\nthe passes %s", d.Name(), a, b)
			}
		}
	})
}
