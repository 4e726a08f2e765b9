package schema_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// slugTool is a tool whose parameter has constraints Gemini cannot take.
func slugTool() tool.Tool {
	return tool.Tool{
		Name:        "claim_slug",
		Description: "Claims a URL slug.",
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"slug": {Type: "string", Description: "The slug", Pattern: "^[a-z]+$", MinLength: jsonschema.Ptr(1), MaxLength: jsonschema.Ptr(64)},
				"tags": {Type: "array", Items: &jsonschema.Schema{Type: "string"}, MaxItems: jsonschema.Ptr(5)},
			},
			Required: []string{"slug"},
		},
		Execute: func(ctx context.Context, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
			return tool.Text("claimed"), nil
		},
	}
}

// TestGeminiStripsButThePipelineEnforces: the schema sent to Gemini has no
// pattern, length or count keywords — they are in the description — yet a
// call that breaks them is refused by the pipeline with a precise error,
// because calls are validated against the original schema.
func TestGeminiStripsButThePipelineEnforces(t *testing.T) {
	t.Parallel()
	tl := slugTool()
	doc, err := schema.FromSchema(tl.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	compiled, _ := schema.Gemini.Compile(doc)
	text, err := schema.Encode(compiled)
	if err != nil {
		t.Fatal(err)
	}
	for _, kw := range []string{`"pattern"`, `"minLength"`, `"maxLength"`, `"maxItems"`} {
		if strings.Contains(string(text), kw) {
			t.Errorf("the Gemini schema still has %s: %s", kw, text)
		}
	}
	if !strings.Contains(string(text), `"The slug (1–64 chars; pattern ^[a-z]+$)"`) || !strings.Contains(string(text), `"at most 5 items"`) {
		t.Errorf("the removed constraints are not in the descriptions: %s", text)
	}

	reg := registry.New()
	if err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, nil)
	tests := []struct {
		args    string
		isError bool
		want    []string
	}{
		{`{"slug":"ok"}`, false, []string{"claimed"}},
		{`{"slug":"Not OK"}`, true, []string{`slug: 'Not OK' does not match pattern '^[a-z]+$'`, `"slug": "Not OK"`}},
		{`{"slug":"","tags":["a","b","c","d","e","f"]}`, true, []string{"slug: minLength", "tags: maxItems"}},
	}
	for _, tc := range tests {
		msg := r.Run(context.Background(), tool.Call{ID: "call_1", Name: tl.Name, Arguments: json.RawMessage(tc.args)})
		if msg.IsError != tc.isError {
			t.Errorf("%s: isError %v, want %v: %+v", tc.args, msg.IsError, tc.isError, msg.Content)
			continue
		}
		got := msg.Content[0].Text
		if env, ok := tool.ParseEnvelope(got); ok {
			got = env.Error
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the result does not say %q:\n%s", tc.args, w, got)
			}
		}
	}
}
