package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// TestLazyParametersListAsConverted: tools whose parameters are lazy (as
// imported tools' are) are listed byte for byte as the same tools with
// their parameters converted — every page of tools/list, for every
// dialect and protocol version — and listing them converts none of them.
func TestLazyParametersListAsConverted(t *testing.T) {
	t.Parallel()
	var docs []any
	for _, raw := range corpusInputSchemas(t) {
		doc, err := schema.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	var conversions atomic.Int64
	convert := func(v any) (*jsonschema.Schema, error) {
		conversions.Add(1)
		return schema.ToSchema(v)
	}
	converted, lazy := registry.New(), registry.New()
	lazyTools := 0
	for i := range 1100 { // more than a page
		doc := docs[i%len(docs)]
		params, err := schema.ToSchema(doc)
		if err != nil {
			t.Fatal(err)
		}
		tl := tool.Tool{
			Name:        fmt.Sprintf("tool_%04d", i),
			Description: fmt.Sprintf("Tool %d.", i),
			Parameters:  params,
			Meta:        tool.Meta{Destructive: i%2 == 0, OpenWorld: true},
			Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
				return tool.Text("ok"), nil
			},
		}
		if err := converted.Register(tl); err != nil {
			t.Fatal(err)
		}
		if form, ok := schema.RoundTripForm(doc); ok { // as an import gives them
			tl.Parameters, tl.LazyParameters = nil, tool.NewLazyParameters(form, convert)
			lazyTools++
		}
		if err := lazy.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	if lazyTools < 1000 {
		t.Fatalf("only %d tools have lazy parameters", lazyTools)
	}
	for _, d := range schema.Dialects() {
		serve := func(reg *registry.Registry) *Server {
			srv := New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, Options{Logger: slog.New(slog.DiscardHandler), Dialect: d})
			t.Cleanup(srv.Close)
			return srv
		}
		want, got := serve(converted), serve(lazy)
		for _, version := range []string{"2025-06-18", "2025-11-25"} {
			w, g := rawAnswers(t, want, version, ""), rawAnswers(t, got, version, "")
			if len(w) < 2 || len(g) != len(w) {
				t.Fatalf("%s %s: %d pages, converted %d", d.Name(), version, len(g), len(w))
			}
			for i := range w {
				if g[i] != w[i] {
					t.Errorf("%s %s: page %d differs from the converted tools':\n%.2000s\nwant\n%.2000s", d.Name(), version, i, g[i], w[i])
				}
			}
		}
	}
	if n := conversions.Load(); n != 0 {
		t.Errorf("listing converted %d lazy schemas", n)
	}
}

// corpusInputSchemas returns the input schemas of every corpus tool.
func corpusInputSchemas(t testing.TB) []json.RawMessage {
	t.Helper()
	var schemas []json.RawMessage
	for _, tl := range corpusTools(t) {
		schemas = append(schemas, tl.InputSchema)
	}
	return schemas
}

// corpusTool is a tool of the corpus, as its server lists it.
type corpusTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// corpusTools returns every corpus tool (testdata/mcp-tools and
// schema/testdata/corpus, as bench/manytools serves them).
func corpusTools(t testing.TB) []corpusTool {
	t.Helper()
	var tools []corpusTool
	for _, f := range []string{"../testdata/mcp-tools/*.json", "../schema/testdata/corpus/*.json"} {
		files, err := filepath.Glob(f)
		if err != nil || len(files) == 0 {
			t.Fatalf("no corpus files %s", f)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var server struct {
				Tools []corpusTool `json:"tools"`
			}
			if err := json.Unmarshal(b, &server); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			tools = append(tools, server.Tools...)
		}
	}
	return tools
}
