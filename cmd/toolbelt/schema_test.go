package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tempFile writes a file in a fresh temporary directory and returns its path.
func tempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const slugSchema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"properties": {
		"slug": {"type": "string", "description": "The slug", "pattern": "^[a-z]+$", "minLength": 1, "maxLength": 64},
		"count": {"type": "integer", "minimum": 1},
		"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
		"labels": {"type": "object", "additionalProperties": {"type": "string"}}
	},
	"required": ["slug"],
	"additionalProperties": false
}`

func TestSchemaNormalize(t *testing.T) {
	t.Parallel()
	file := tempFile(t, "slug.json", slugSchema)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout []string // each must appear
		stderr string
	}{
		{"gemini", "", []string{"schema", "normalize", "--provider", "gemini", file}, 0,
			[]string{`"description": "The slug (1–64 chars; pattern ^[a-z]+$)"`, `"description": "at most 5 items"`, `"description": "any keys, values: string"`}, ""},
		{"stdin", slugSchema, []string{"schema", "normalize", "--provider", "xai"}, 0,
			[]string{`"pattern": "^[a-z]+$"`, `"description": "The slug (1–64 chars)"`}, ""},
		{"report", "", []string{"schema", "normalize", "--provider", "gemini", "--report", file}, 0,
			[]string{"properties.slug.pattern: moved to description\n", "properties.labels.additionalProperties: moved to description\n", "$schema: removed\n"}, ""},
		{"report json", "", []string{"schema", "normalize", "--provider", "gemini", "--report", "--json", file}, 0,
			[]string{`"dialect": "gemini"`, `"path": "properties.tags.maxItems"`}, ""},
		{"strict warns", "", []string{"schema", "normalize", "--provider", "openai-strict", file}, 0,
			[]string{`"additionalProperties": false`}, "toolbelt: not strict: properties.labels: an object that takes keys beyond"},
		{"compat", "", []string{"schema", "normalize", "--provider", "compat:pattern", file}, 0,
			[]string{`"maxLength": 64`, `"description": "The slug (pattern ^[a-z]+$)"`}, ""},
		{"tools/list", `{"tools":[{"name":"fetch","inputSchema":{"type":"object","properties":{"url":{"type":"string","format":"uri"}}}},{"name":"now","inputSchema":{}}]}`,
			[]string{"schema", "normalize", "--provider", "gemini", "--report"}, 0,
			[]string{"tools.fetch.inputSchema.properties.url.format: moved to description\n", "tools.now.inputSchema.properties: empty properties added\n"}, ""},
		{"unknown provider", "", []string{"schema", "normalize", "--provider", "mistral", file}, 2, nil, `unknown dialect "mistral"`},
		{"not JSON", "{nope", []string{"schema", "normalize", "--provider", "gemini", "-"}, 2, nil, "stdin is not JSON"},
		{"missing file", "", []string{"schema", "normalize", "--provider", "gemini", filepath.Join(t.TempDir(), "none.json")}, 2, nil, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, tc.stdin, tc.args...).expect(t, tc.code)
			for _, w := range tc.stdout {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, r.stderr)
			}
		})
	}
}

func TestSchemaNormalizeGeminiDropsWhatItRejects(t *testing.T) {
	t.Parallel()
	r := runCLI(t, slugSchema, "schema", "normalize", "--provider", "gemini").expect(t, 0)
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, kw := range []string{`"pattern"`, `"minLength"`, `"maxItems"`, `"additionalProperties"`, `"$schema"`, `"minimum"`} {
		if strings.Contains(r.stdout, kw) {
			t.Errorf("the Gemini schema still has %s:\n%s", kw, r.stdout)
		}
	}
}

func TestSchemaValidate(t *testing.T) {
	t.Parallel()
	schemaFile := tempFile(t, "slug.json", slugSchema)
	argsFile := tempFile(t, "args.json", `{"slug":"ok","count":"3"}`)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"valid", "", []string{"--args", `{"slug":"ok"}`}, 0, "valid\n", ""},
		{"coerced", "", []string{"--args-file", argsFile}, 0, "coerced count: \"3\" → 3\nvalid\n", ""},
		{"stdin", `{"slug":"ok","count":2}`, []string{"--args-file", "-"}, 0, "valid\n", ""},
		{"every error", "", []string{"--args", `{"slug":"Not OK","count":0,"tags":[true],"extra":true}`}, 1,
			"(root): unknown property \"extra\" is not allowed; the properties left to set are \"labels\"\n" +
				"count: minimum: got 0, want at least 1\n" +
				"slug: 'Not OK' does not match pattern '^[a-z]+$'\n" +
				"tags[0]: got boolean, want string\n", ""},
		{"no coercion", "", []string{"--no-coerce", "--args", `{"slug":"ok","count":"3"}`}, 1, "count: got string, want integer\n", ""},
		{"missing", "", []string{"--args", `{}`}, 1, "(root): missing required property \"slug\"\n", ""},
		{"not JSON", "", []string{"--args", `{"slug":`}, 1, "(root): the arguments are not valid JSON: unexpected EOF\n", ""},
		{"no arguments", "", nil, 2, "", "give the arguments once"},
		{"both", "", []string{"--args", "{}", "--args-file", argsFile}, 2, "", "give the arguments once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"schema", "validate", "--schema", schemaFile}, tc.args...)
			r := runCLI(t, tc.stdin, args...).expect(t, tc.code)
			if r.stdout != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, tc.stdout)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, r.stderr)
			}
		})
	}
}

func TestSchemaValidateJSONAndBadSchema(t *testing.T) {
	t.Parallel()
	schemaFile := tempFile(t, "slug.json", slugSchema)
	r := runCLI(t, "", "schema", "validate", "--json", "--schema", schemaFile, "--args", `{"slug":"x","count":"0"}`).expect(t, 1)
	var got validation
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if got.Valid || len(got.Errors) != 1 || got.Errors[0].Path != "count" || len(got.Coercions) != 1 {
		t.Errorf("validation JSON: %s", r.stdout)
	}
	bad := tempFile(t, "bad.json", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)
	r = runCLI(t, "", "schema", "validate", "--schema", bad, "--args", `{}`).expect(t, 2)
	if !strings.Contains(r.stderr, "is not fetched") {
		t.Errorf("a remote reference must be refused, not fetched:\n%s", r.stderr)
	}
}

func TestSchemaExport(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "schema", "export", "--provider", "gemini", "--include", "test_greet,test_sleep").expect(t, 0)
	var gemini struct {
		FunctionDeclarations []struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"functionDeclarations"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &gemini); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if n := len(gemini.FunctionDeclarations); n != 2 || gemini.FunctionDeclarations[0].Name != "test_greet" {
		t.Fatalf("declarations: %s", r.stdout)
	}
	if strings.Contains(r.stdout, `"minLength"`) || !strings.Contains(r.stdout, `"Who to greet (at least 1 char)"`) {
		t.Errorf("the Gemini export still has minLength or lost it:\n%s", r.stdout)
	}
	again := runCLI(t, "", "schema", "export", "--provider", "gemini", "--include", "test_greet,test_sleep").expect(t, 0)
	if again.stdout != r.stdout {
		t.Error("two exports differ")
	}

	r = runCLI(t, "", "schema", "export", "--provider", "openai-strict", "--include", "test_greet").expect(t, 0)
	if !strings.Contains(r.stdout, `"strict": true`) || r.stderr != "" {
		t.Errorf("strict export:\n%s\n%s", r.stdout, r.stderr)
	}
	r = runCLI(t, "", "schema", "export", "--provider", "anthropic", "--report", "--include", "test_greet").expect(t, 0)
	if r.stdout != "" {
		t.Errorf("anthropic takes the schema as it is, yet the report says:\n%s", r.stdout)
	}
	r = runCLI(t, "", "schema", "export", "--provider", "gemini", "--report", "--include", "test_greet").expect(t, 0)
	if !strings.Contains(r.stdout, "tools.test_greet.parameters.properties.name.minLength: moved to description\n") {
		t.Errorf("report:\n%s", r.stdout)
	}
	runCLI(t, "", "schema", "export", "--provider", "nope").expect(t, 2)
	runCLI(t, "", "schema", "export", "--provider", "gemini", "--include", "no_such_tool").expect(t, 2)
}

func TestSchemaLint(t *testing.T) {
	t.Parallel()
	file := tempFile(t, "slug.json", slugSchema)
	r := runCLI(t, "", "schema", "lint", "--provider", "gemini", file).expect(t, 1)
	for _, want := range []string{
		`properties.slug.pattern: gemini does not accept "pattern" → moved to description`,
		`properties.labels.additionalProperties: gemini does not accept "additionalProperties"`,
		`$schema: gemini does not accept "$schema"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lint lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "", "schema", "lint", "--provider", "anthropic", file).expect(t, 0)
	if r.stdout != "anthropic accepts it as it is\n" {
		t.Errorf("anthropic lint: %q", r.stdout)
	}
	r = runCLI(t, "", "schema", "lint", "--provider", "openai-strict", file).expect(t, 1)
	if !strings.Contains(r.stdout, "properties.labels: strict mode: an object that takes keys beyond its declared properties") {
		t.Errorf("strict lint:\n%s", r.stdout)
	}
	list := `{"tools":[{"name":"fetch","inputSchema":{"type":"object","properties":{"url":{"type":"string","format":"uri"}}}},{"name":"now","inputSchema":{"type":"object"}}]}`
	r = runCLI(t, list, "schema", "lint", "--provider", "openai").expect(t, 1)
	if r.stdout != "tools.now.parameters.properties: openai needs \"properties\" on the root object → empty properties added\n" {
		t.Errorf("tool list lint: %q", r.stdout)
	}
	r = runCLI(t, list, "schema", "lint", "--provider", "gemini", "--json").expect(t, 1)
	var problems []struct{ Path, Message string }
	if err := json.Unmarshal([]byte(r.stdout), &problems); err != nil || len(problems) != 1 || problems[0].Path != "tools.fetch.parameters.properties.url.format" {
		t.Errorf("lint --json: %v %s", err, r.stdout)
	}
}
