package mcp_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/mcp/client"
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

// TestImportedEmbeddedResources: an imported server's embedded resources
// come back to Toolbelt's MCP client as embedded resources (uri, MIME type,
// text or blob), not as text describing them; the text of a server that
// reaches the outside world is wrapped as external content.
func TestImportedEmbeddedResources(t *testing.T) {
	t.Parallel()
	up := sdk.NewServer(&sdk.Implementation{Name: "files", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "fetch", Description: "Returns two resources.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://notes.txt", MIMEType: "text/plain", Text: "the notes"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://data.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
			}}, nil
		})
	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{"files": {}}, client.Options{Logger: quietLog, Transport: func(ctx context.Context, _ string) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		if _, err := up.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog, Imported: m})
	t.Cleanup(srv.Close)
	cs := connectTo(t, srv, nil, nil)
	res := callTool(t, cs, "files__fetch", map[string]any{})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result: %v %+v", res.IsError, res.Content)
	}
	text, ok := res.Content[0].(*sdk.EmbeddedResource)
	if !ok || text.Resource.URI != "mem://notes.txt" || text.Resource.MIMEType != "text/plain" ||
		!strings.Contains(text.Resource.Text, "the notes") || !strings.Contains(text.Resource.Text, "EXTERNAL_UNTRUSTED_CONTENT") {
		t.Errorf("text resource: %#v", res.Content[0])
	}
	blob, ok := res.Content[1].(*sdk.EmbeddedResource)
	if !ok || blob.Resource.URI != "mem://data.bin" || blob.Resource.MIMEType != "application/octet-stream" || string(blob.Resource.Blob) != "\x00\x01\x02" {
		t.Errorf("binary resource: %#v", res.Content[1])
	}
}
