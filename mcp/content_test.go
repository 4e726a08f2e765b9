package mcp_test

import (
	"context"
	"encoding/base64"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestEmbeddedResourceContent: a tool's resource blocks reach the client
// as MCP embedded resources, text and binary.
func TestEmbeddedResourceContent(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	embed := tool.Must(tool.New("embed", "Embeds resources.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Result{Content: []tool.Content{
			{Type: tool.TextContent, Text: "two resources"},
			{Type: tool.ResourceContent, URI: "test://notes", MIMEType: "text/plain", Text: "the notes"},
			{Type: tool.ResourceContent, URI: "test://blob", MIMEType: "application/octet-stream", Data: base64.StdEncoding.EncodeToString([]byte{0, 1, 2})},
		}}, nil
	}))
	embed.Meta.ReadOnly = true
	if err := reg.Register(embed); err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(reg, &tool.Context{}, mcp.Options{Logger: quietLog})
	t.Cleanup(srv.Close)
	cs := connectTo(t, srv, nil, nil)
	res := callTool(t, cs, "embed", map[string]any{})
	if res.IsError || len(res.Content) != 3 {
		t.Fatalf("result: %+v", res.Content)
	}
	text, ok := res.Content[1].(*sdk.EmbeddedResource)
	if !ok || text.Resource.URI != "test://notes" || text.Resource.MIMEType != "text/plain" || text.Resource.Text != "the notes" {
		t.Errorf("text resource: %+v", res.Content[1])
	}
	blob, ok := res.Content[2].(*sdk.EmbeddedResource)
	if !ok || blob.Resource.URI != "test://blob" || string(blob.Resource.Blob) != "\x00\x01\x02" || blob.Resource.Text != "" {
		t.Errorf("binary resource: %+v", res.Content[2])
	}
}
