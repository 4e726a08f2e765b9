package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/tool"
)

// corpusTools returns the schema package's corpus of real and realistic
// tool schemas as tools. A name two servers share gets its server's name
// in front, as one tool list has each name once.
func corpusTools(tb testing.TB) []tool.Tool {
	tb.Helper()
	var files []string
	for _, dir := range []string{filepath.Join("..", "testdata", "mcp-tools"), filepath.Join("..", "schema", "testdata", "corpus")} {
		found, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(found) == 0 {
			tb.Fatalf("no corpus files in %s", dir)
		}
		files = append(files, found...)
	}
	var tools []tool.Tool
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var server struct {
			Server string `json:"server"`
			Tools  []struct {
				Name        string             `json:"name"`
				Description string             `json:"description"`
				InputSchema *jsonschema.Schema `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &server); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, t := range server.Tools {
			if seen[t.Name] {
				t.Name = server.Server + "_" + t.Name
			}
			seen[t.Name] = true
			tools = append(tools, tool.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		}
	}
	return tools
}

// BenchmarkExportCorpus exports the whole corpus for a target: "cold" with
// a new exporter each time (every schema compiled), "cached" with one
// exporter (the compile cache serves every schema; what is left is
// writing the request's JSON).
func BenchmarkExportCorpus(b *testing.B) {
	tools := corpusTools(b)
	for _, name := range []string{"gemini", "openai-strict", "xai", "anthropic"} {
		target, err := ParseTarget(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/cold", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewExporter(nil).Export(tools, target); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/cached", func(b *testing.B) {
			ex := NewExporter(nil)
			if _, err := ex.Export(tools, target); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ex.Export(tools, target); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCachedExportIsTheColdExport: the corpus exported from the cache is
// byte for byte what a fresh exporter writes.
func TestCachedExportIsTheColdExport(t *testing.T) {
	t.Parallel()
	tools := corpusTools(t)
	for _, name := range []string{"gemini", "openai-strict", "xai", "anthropic", "openai"} {
		ex := NewExporter(nil)
		first := export(t, ex, tools, name)
		n := ex.compiles
		again := export(t, ex, tools, name)
		cold := export(t, NewExporter(nil), tools, name)
		if ex.compiles != n {
			t.Errorf("%s: the second export compiled %d schemas again", name, ex.compiles-n)
		}
		if string(again.Tools) != string(cold.Tools) || string(first.Tools) != string(cold.Tools) {
			t.Errorf("%s: the cached export differs from a fresh one", name)
		}
	}
}
