package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/cputime"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// corpusInputs returns the input schemas of the tools/list answers under
// testdata/mcp-tools, decoded as a sync decodes them (json.Number numbers).
func corpusInputs(tb testing.TB) []any {
	files, err := filepath.Glob("../../testdata/mcp-tools/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus under ../../testdata/mcp-tools: %v", err)
	}
	var inputs []any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var list struct {
			Tools []struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, t := range list.Tools {
			doc, err := schema.Decode(t.InputSchema)
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			inputs = append(inputs, doc)
		}
	}
	return inputs
}

// importedTool is a tool with the parameters an import gives input.
func importedTool(tb testing.TB, input any) *tool.Tool {
	s, lazy, err := parameters(input)
	if err != nil {
		tb.Fatal(err)
	}
	return &tool.Tool{Name: "t", Parameters: s, LazyParameters: lazy}
}

// TestCheckCompilesWhatACallCompiles: the schema check, which compiles
// lazy parameters from their generic form, agrees with the validator a
// call compiles (from the converted schema) on every schema of the corpus,
// and on schemas that do not compile.
func TestCheckCompilesWhatACallCompiles(t *testing.T) {
	t.Parallel()
	inputs := corpusInputs(t)
	for _, bad := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
		`{"type":"object","properties":{"a":{"type":"strin"}}}`,
		`{"type":"object","properties":{"a":{"minLength":-1}}}`,
	} {
		doc, err := schema.Decode([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, doc)
	}
	lazy, failing := 0, 0
	for i, input := range inputs {
		tl := importedTool(t, input)
		if _, ok := tl.ParamsDoc(); ok {
			lazy++
		}
		got := compiles(tl)
		_, want := schema.Compile(importedTool(t, input).Params())
		if (got == nil) != (want == nil) {
			t.Errorf("schema %d: the check says %v, a call's compile %v", i, got, want)
		}
		if got != nil {
			failing++
		}
	}
	if lazy == 0 || failing != 3 {
		t.Errorf("%d lazy schemas, %d failing: the corpus no longer tests both paths", lazy, failing)
	}
}

// BenchmarkSchemaCheck is the schema check of the corpus's tools as an
// import makes them: "generic" as it is (lazy parameters compiled from
// their generic form), "converted" as it was (each converted to a
// jsonschema.Schema and encoded again before it is compiled). One op is the
// whole corpus.
func BenchmarkSchemaCheck(b *testing.B) {
	inputs := corpusInputs(b)
	for _, bc := range []struct {
		name  string
		check func(*tool.Tool) error
	}{
		{"generic", compiles},
		{"converted", func(t *tool.Tool) error { _, err := schema.Compile(t.Params()); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration // of the checks only, not of making the tools
			for b.Loop() {
				b.StopTimer()
				tools := make([]*tool.Tool, len(inputs))
				for i, input := range inputs {
					tools[i] = importedTool(b, input)
				}
				b.StartTimer()
				start := cputime.Used()
				for _, t := range tools {
					_ = bc.check(t)
				}
				cpu += cputime.Used() - start
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
