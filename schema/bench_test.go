package schema

import (
	"testing"

	"github.com/toolbelt/toolbelt/internal/cputime"
)

// BenchmarkCompileCorpus compiles every tool schema of the corpus
// (see corpusDirs) for one dialect: one op is the whole corpus. cpu-ns/op
// is the process's CPU time per op, steadier than ns/op on a busy machine.
func BenchmarkCompileCorpus(b *testing.B) {
	tools := loadCorpus(b)
	docs := make([]any, len(tools))
	for i, tl := range tools {
		docs[i] = tl.Doc
	}
	for _, d := range testDialects() {
		b.Run(d.Name(), func(b *testing.B) {
			b.ReportAllocs()
			start := cputime.Used()
			for b.Loop() {
				for _, doc := range docs {
					d.Compile(doc)
				}
			}
			b.ReportMetric(float64(len(docs)), "tools/op")
			b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

const tenFieldSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1, "maxLength": 4096},
		"offset": {"type": "integer", "minimum": 0},
		"limit": {"type": "integer", "minimum": 1, "maximum": 10000},
		"encoding": {"type": "string", "enum": ["utf-8", "latin1", "base64"]},
		"follow": {"type": "boolean"},
		"pattern": {"type": "string", "pattern": "^[a-z*?.]+$"},
		"depth": {"type": "integer", "minimum": 0, "maximum": 32},
		"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
		"ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
		"mode": {"type": "string", "enum": ["fast", "safe"]}
	},
	"required": ["path", "limit"],
	"additionalProperties": false
}`

const tenFieldCall = `{"path":"src/main.go","offset":10,"limit":200,"encoding":"utf-8","follow":true,"pattern":"main*.go","depth":3,"tags":["a","b"],"ratio":0.5,"mode":"safe"}`

// BenchmarkValidateTenFields validates a 10-field call against a cached
// validator, as the pipeline does: Accepts on the JSON text first (the
// common case), Validate on decoded arguments when it cannot decide, and
// Coerce for what a weak model sends.
func BenchmarkValidateTenFields(b *testing.B) {
	v, err := CompileJSON([]byte(tenFieldSchema))
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(tenFieldCall)
	args, err := Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Accepts", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !v.Accepts(raw) {
				b.Fatal("not accepted")
			}
		}
	})
	b.Run("Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := v.Validate(args); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("Coerce", func(b *testing.B) {
		obj := args.(map[string]any)
		b.ReportAllocs()
		for b.Loop() {
			if c := v.Coerce(obj); len(c) > 0 {
				b.Fatal(c)
			}
		}
	})
}
