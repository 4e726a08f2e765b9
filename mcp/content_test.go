package mcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/policy"
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
	res := callTool(t, connectTo(t, serveImported(t, &upstream{srv: up}, &policy.Policy{}), nil, nil), "docs__fetch", map[string]any{})
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

// TestImportedResourcesAreShaped: an imported server's text resource past
// the result cap reaches the caller cut, naming the resource, with the
// read-on notice; its embedded image reaches the caller as an image.
func TestImportedResourcesAreShaped(t *testing.T) {
	t.Parallel()
	var pixel bytes.Buffer
	if err := png.Encode(&pixel, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a line of the big resource\n", 40000) // over 1 MB
	up := sdk.NewServer(&sdk.Implementation{Name: "files", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "big", Description: "Returns a big text resource.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://big.txt", MIMEType: "text/plain", Text: big}},
			}}, nil
		})
	up.AddTool(&sdk.Tool{Name: "picture", Description: "Returns an embedded image.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://pixel.png", MIMEType: "image/png", Blob: pixel.Bytes()}},
			}}, nil
		})
	cs := connectTo(t, serveImported(t, &upstream{srv: up}, &policy.Policy{}), nil, nil)

	res := callTool(t, cs, "docs__big", map[string]any{})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result: %v, %d blocks", res.IsError, len(res.Content))
	}
	cut, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("want the resource cut into text, got %T", res.Content[0])
	}
	if n := utf8.RuneCountInString(cut.Text); n > invoke.DefaultMaxResultChars {
		t.Errorf("the resource reached the caller with %d characters, more than the cap of %d", n, invoke.DefaultMaxResultChars)
	}
	if !strings.Contains(cut.Text, "[resource: mem://big.txt, text/plain]\na line of the big resource") || !strings.Contains(cut.Text, "call result_read with") {
		t.Errorf("the cut does not name the resource or read on: %.300q", cut.Text)
	}

	res = callTool(t, cs, "docs__picture", map[string]any{})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result: %v, %d blocks", res.IsError, len(res.Content))
	}
	if img, ok := res.Content[0].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, pixel.Bytes()) {
		t.Errorf("want the embedded image as an image, got %#v", res.Content[0])
	}
}
