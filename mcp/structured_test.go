package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

type countArgs struct {
	Text string `json:"text"`
}

type countOut struct {
	Words int    `json:"words" jsonschema:"How many words."`
	First string `json:"first,omitempty"`
}

// structuredTools are a typed tool with an output type and a tool whose
// result breaks the output schema it declares.
func structuredTools(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	count := tool.Must(tool.NewStructured("count", "Counts words.", func(_ context.Context, in countArgs, _ tool.Invocation) (countOut, error) {
		f := strings.Fields(in.Text)
		out := countOut{Words: len(f)}
		if len(f) > 0 {
			out.First = f[0]
		}
		return out, nil
	}))
	count.Meta.ReadOnly = true
	liar := tool.Must(tool.New("liar", "Says it returns a number.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		r := tool.Text("forty-two")
		r.Details = map[string]any{"n": "forty-two"}
		return r, nil
	}))
	liar.Output = &jsonschema.Schema{Type: "object", Required: []string{"n"}, Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}
	liar.Meta.ReadOnly = true
	for _, tt := range []tool.Tool{count, liar} {
		if err := reg.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// TestStructuredOutput: a tool with an output schema is listed with it,
// answers with structuredContent that fits it (the text kept for clients
// that do not read it, the pipeline's notes left out where the schema
// allows no other keys), and a result that breaks it is an error.
func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	srv := mcp.New(structuredTools(t), &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog})
	t.Cleanup(srv.Close)
	cs := connectTo(t, srv, nil, nil)

	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *sdk.Tool
	for _, tt := range list.Tools {
		if tt.Name == "count" {
			listed = tt
		}
	}
	if listed == nil || listed.OutputSchema == nil {
		t.Fatalf("count listed without an output schema: %+v", listed)
	}
	want, _ := json.Marshal(map[string]any{
		"type": "object", "required": []string{"words"}, "additionalProperties": false,
		"properties": map[string]any{"words": map[string]any{"type": "integer", "description": "How many words."}, "first": map[string]any{"type": "string"}},
	})
	b, _ := json.Marshal(listed.OutputSchema)
	if got := mustCanon(t, b); got != mustCanon(t, want) {
		t.Errorf("outputSchema = %s, want %s", got, want)
	}

	// "TEXT" is normalized to "text": the pipeline notes it in the details.
	res := callTool(t, cs, "count", map[string]any{"TEXT": "to be or not"})
	if res.IsError {
		t.Fatalf("count failed: %s", texts(res))
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if string(sc) != `{"first":"to","words":4}` {
		t.Errorf("structuredContent = %s, want {\"first\":\"to\",\"words\":4}", sc)
	}
	if !strings.Contains(texts(res), `"words": 4`) {
		t.Errorf("the text content lost the result: %q", texts(res))
	}

	res = callTool(t, cs, "liar", map[string]any{})
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("a result that breaks the output schema came back as a success: %s %v", texts(res), res.StructuredContent)
	}
	if e := errorOf(res); !strings.Contains(e, "does not fit its output schema") || !strings.Contains(e, "n: got string, want integer") {
		t.Errorf("error = %q, want the violation of n", e)
	}
}

// mustCanon returns JSON text in Go's canonical encoding (sorted keys).
func mustCanon(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	c, _ := json.Marshal(v)
	return string(c)
}
