package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
)

// TestImportedOutputSchema: an imported tool keeps its server's output
// schema, and a result whose structured content breaks it is an error.
func TestImportedOutputSchema(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "1"}, nil)
	output := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	for name, n := range map[string]any{"honest": 42, "liar": "forty-two"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: output},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "n"}}, StructuredContent: map[string]any{"n": n}}, nil
			})
	}
	_, reg := start(t, map[string]config.MCPServer{"t": {}}, client.Options{Transport: memoryTransport(t, &testServer{srv: srv})})
	honest, ok := reg.Resolve("t__honest", nil, nil)
	if !ok || honest.Output == nil || honest.Output.Properties["n"] == nil || honest.Output.Properties["n"].Type != "integer" {
		t.Fatalf("the output schema was not kept: %+v", honest.Output)
	}
	r := runner(reg)
	if res := run(t, r, "t__honest", `{}`); res.IsError || !equalJSON(res.Details, `{"n":42}`) {
		t.Errorf("honest: %v %s %v", res.IsError, text(res.Content), res.Details)
	}
	res := run(t, r, "t__liar", `{}`)
	if !res.IsError || !strings.Contains(text(res.Content), "does not fit its output schema") {
		t.Errorf("liar: a result that breaks the server's output schema was taken: %v %s", res.IsError, text(res.Content))
	}
}

// equalJSON reports whether v encodes as the JSON text want (keys sorted).
func equalJSON(v any, want string) bool {
	b, _ := json.Marshal(v)
	var w any
	_ = json.Unmarshal([]byte(want), &w)
	c, _ := json.Marshal(w)
	return string(b) == string(c)
}
