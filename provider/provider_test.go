package provider

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func run(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
	return tool.Text("ok"), nil
}

func fetchTool() tool.Tool {
	return tool.Tool{
		Name:        "fetch",
		Description: "Fetches a URL.",
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"url":       {Type: "string", Format: "uri", Description: "The URL"},
				"max_bytes": {Type: "integer", Minimum: jsonschema.Ptr(1.0)},
			},
			Required: []string{"url"},
		},
		Execute: run,
	}
}

func noArgsTool() tool.Tool {
	return tool.Tool{Name: "now", Description: "Returns the time.", Execute: run}
}

func envTool() tool.Tool {
	return tool.Tool{
		Name:        "env_set",
		Description: "Sets variables.",
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"vars": {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"}},
			},
			Required: []string{"vars"},
		},
		Execute: run,
	}
}

func export(t *testing.T, ex *Exporter, tools []tool.Tool, name string) Export {
	t.Helper()
	target, err := ParseTarget(name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ex.Export(tools, target)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExportWireFormats(t *testing.T) {
	t.Parallel()
	tools := []tool.Tool{fetchTool(), noArgsTool()}
	fetchParams := `{"properties":{"max_bytes":{"minimum":1,"type":"integer"},"url":{"description":"The URL","format":"uri","type":"string"}},"required":["url"],"type":"object"}`
	tests := []struct {
		target string
		want   string
	}{
		{"openai", `[{"type":"function","function":{"name":"fetch","description":"Fetches a URL.","parameters":` + fetchParams + `}},` +
			`{"type":"function","function":{"name":"now","description":"Returns the time.","parameters":{"properties":{},"type":"object"}}}]`},
		{"openai-strict", `[{"type":"function","function":{"name":"fetch","description":"Fetches a URL.","parameters":` +
			`{"additionalProperties":false,"properties":{"max_bytes":{"minimum":1,"type":["integer","null"]},"url":{"description":"The URL (format: uri)","type":"string"}},"required":["url","max_bytes"],"type":"object"},"strict":true}},` +
			`{"type":"function","function":{"name":"now","description":"Returns the time.","parameters":{"additionalProperties":false,"properties":{},"required":[],"type":"object"},"strict":true}}]`},
		{"openai-responses", `[{"type":"function","name":"fetch","description":"Fetches a URL.","parameters":` + fetchParams + `,"strict":false},` +
			`{"type":"function","name":"now","description":"Returns the time.","parameters":{"properties":{},"type":"object"},"strict":false}]`},
		{"anthropic", `[{"name":"fetch","description":"Fetches a URL.","input_schema":` + fetchParams + `},` +
			`{"name":"now","description":"Returns the time.","input_schema":{"properties":{},"type":"object"}}]`},
		{"gemini", `{"functionDeclarations":[{"name":"fetch","description":"Fetches a URL.","parameters":` +
			`{"properties":{"max_bytes":{"description":"≥ 1","type":"integer"},"url":{"description":"The URL (format: uri)","type":"string"}},"required":["url"],"type":"object"}},` +
			`{"name":"now","description":"Returns the time."}]}`},
		{"gemini-json", `{"functionDeclarations":[{"name":"fetch","description":"Fetches a URL.","parametersJsonSchema":` +
			`{"properties":{"max_bytes":{"minimum":1,"type":"integer"},"url":{"description":"The URL (format: uri)","type":"string"}},"required":["url"],"type":"object"}},` +
			`{"name":"now","description":"Returns the time."}]}`},
		{"xai", `[{"type":"function","function":{"name":"fetch","description":"Fetches a URL.","parameters":` + fetchParams + `}},` +
			`{"type":"function","function":{"name":"now","description":"Returns the time.","parameters":{"properties":{},"type":"object"}}}]`},
		{"compat:format", `[{"type":"function","function":{"name":"fetch","description":"Fetches a URL.","parameters":` +
			`{"properties":{"max_bytes":{"minimum":1,"type":"integer"},"url":{"description":"The URL (format: uri)","type":"string"}},"required":["url"],"type":"object"}}},` +
			`{"type":"function","function":{"name":"now","description":"Returns the time.","parameters":{"properties":{},"type":"object"}}}]`},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			out := export(t, NewExporter(nil), tools, tc.target)
			if got := string(out.Tools); got != tc.want {
				t.Errorf("tools:\n got  %s\n want %s", got, tc.want)
			}
			if !json.Valid(out.Tools) {
				t.Error("not valid JSON")
			}
		})
	}
}

func TestExportReportsPaths(t *testing.T) {
	t.Parallel()
	out := export(t, NewExporter(nil), []tool.Tool{fetchTool()}, "gemini")
	var lines []string
	for _, r := range out.Reports {
		lines = append(lines, strings.Split(strings.TrimSpace(r.String()), "\n")...)
	}
	want := "tools.fetch.parameters.properties.url.format: moved to description"
	found := false
	for _, l := range lines {
		found = found || l == want
	}
	if !found {
		t.Errorf("reports %q lack %q", lines, want)
	}
}

func TestStrictFallsBackForTheWholeRequest(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai-strict", "openai-responses-strict"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ex := NewExporter(nil)
			strict := export(t, ex, []tool.Tool{fetchTool()}, name)
			if !strict.Strict || strict.Fallback != "" || !strings.Contains(string(strict.Tools), `"strict":true`) {
				t.Errorf("a strict-capable list is not strict: %+v", strict)
			}
			mixed := export(t, ex, []tool.Tool{fetchTool(), envTool()}, name)
			if mixed.Strict {
				t.Fatal("a list with an open map is strict")
			}
			if !strings.Contains(mixed.Fallback, `tool "env_set": properties.vars: an object that takes keys beyond its declared properties`) {
				t.Errorf("fallback does not say why: %q", mixed.Fallback)
			}
			text := string(mixed.Tools)
			if strings.Contains(text, `"strict":true`) || strings.Count(text, `"strict":false`) != 2 {
				t.Errorf("every tool must say strict false: %s", text)
			}
			if strings.Contains(text, `"additionalProperties":false`) || strings.Contains(text, `"null"`) {
				t.Errorf("the fallback must use the non-strict schemas: %s", text)
			}
		})
	}
}

func TestCacheFollowsTheRegistry(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	for _, tl := range []tool.Tool{fetchTool(), noArgsTool()} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	ex := NewExporter(reg)
	first := export(t, ex, reg.ResolveAll(nil, nil), "gemini")
	if ex.compiles != 2 {
		t.Fatalf("%d compilations, want 2", ex.compiles)
	}
	again := export(t, ex, reg.ResolveAll(nil, nil), "gemini")
	if ex.compiles != 2 || string(again.Tools) != string(first.Tools) {
		t.Fatalf("a second export recompiled (%d) or changed", ex.compiles)
	}
	export(t, ex, reg.ResolveAll(nil, nil), "anthropic")
	if ex.compiles != 4 {
		t.Fatalf("another dialect: %d compilations, want 4", ex.compiles)
	}
	// Re-register fetch with another schema: the cache must not serve the old one.
	reg.Unregister("fetch")
	changed := fetchTool()
	changed.Parameters.Properties["url"].Description = "Where to go"
	if err := reg.Register(changed); err != nil {
		t.Fatal(err)
	}
	after := export(t, ex, reg.ResolveAll(nil, nil), "gemini")
	if !strings.Contains(string(after.Tools), "Where to go") {
		t.Errorf("the re-registered tool's schema is not used: %s", after.Tools)
	}
	if ex.compiles != 6 {
		t.Errorf("%d compilations after re-registering, want 6 (the cache is dropped)", ex.compiles)
	}
}

func TestCacheKeysOnTheSchema(t *testing.T) {
	t.Parallel()
	ex := NewExporter(nil)
	a := fetchTool()
	export(t, ex, []tool.Tool{a}, "openai")
	b := fetchTool() // same name, new schema value: e.g. made by a factory
	b.Parameters.Properties["url"].Description = "B"
	out := export(t, ex, []tool.Tool{b}, "openai")
	if !strings.Contains(string(out.Tools), `"description":"B"`) {
		t.Errorf("a new schema under the same name served from the cache: %s", out.Tools)
	}
}

func TestExportIsDeterministicAndConcurrent(t *testing.T) {
	t.Parallel()
	tools := []tool.Tool{fetchTool(), noArgsTool(), envTool()}
	want := string(export(t, NewExporter(nil), tools, "gemini").Tools)
	ex := NewExporter(nil)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Go(func() {
			target, _ := ParseTarget("gemini")
			out, err := ex.Export(tools, target)
			if err != nil || string(out.Tools) != want {
				errs <- string(out.Tools)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("output differs between exports: %s", e)
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dialect string
		api           API
		err           string
	}{
		{"openai", "openai", OpenAIChat, ""},
		{" openai-responses-strict ", "openai-strict", OpenAIResponses, ""},
		{"gemini-json", "gemini-json", Gemini, ""},
		{"compat:minLength, maxLength", "compat:maxLength,minLength", OpenAIChat, ""},
		{"compat:", "", 0, "names no keywords"},
		{"mistral", "", 0, `unknown provider "mistral": use one of openai, openai-strict`},
	}
	for _, tc := range tests {
		got, err := ParseTarget(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got.Dialect.Name() != tc.dialect || got.API != tc.api {
			t.Errorf("%q: %+v, %v", tc.name, got, err)
		}
	}
	for _, n := range TargetNames() {
		if _, err := ParseTarget(n); err != nil && !strings.Contains(n, "…") {
			t.Errorf("listed target %q does not parse: %v", n, err)
		}
	}
}
