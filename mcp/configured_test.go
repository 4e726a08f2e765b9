package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// configuredServer serves resources rs (files in dir) to a client.
func configuredServer(t *testing.T, rs []mcp.Resource, client *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	srv := mcp.New(registry.New(), &tool.Context{}, mcp.Options{Logger: quietLog, Resources: rs})
	t.Cleanup(srv.Close)
	return connectTo(t, srv, client, nil)
}

func TestConfiguredResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"pixel.png": "\x89PNG\r\n\x1a\nnot really", "pages/intro.md": "# Intro\n", "notes.txt": "notes\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := configuredServer(t, []mcp.Resource{
		{URI: "test://text", Text: "fixed words", Description: "Words."},
		{URI: "test://pixel", File: filepath.Join(dir, "pixel.png")},
		{URI: "test://gone", File: filepath.Join(dir, "gone.txt")},
		{URITemplate: "test://items/{id}", MIMEType: "application/json", Text: `{"id": "{id}"}`},
		{URITemplate: "docs://pages/{name}", File: filepath.Join(dir, "pages", "{name}.md")},
	}, nil)
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI+" "+r.Name)
	}
	if got := strings.Join(uris, ", "); !strings.Contains(got, "test://text test://text") || !strings.Contains(got, "test://pixel") {
		t.Errorf("resources/list = %s", got)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) < 2 {
		t.Fatalf("templates = %+v, %v", templates, err)
	}
	for _, tc := range []struct {
		uri, mime, text, blob, err string
	}{
		{uri: "test://text", mime: "text/plain", text: "fixed words"},
		{uri: "test://pixel", mime: "image/png", blob: "\x89PNG\r\n\x1a\nnot really"},
		{uri: "test://items/42", mime: "application/json", text: `{"id": "42"}`},
		{uri: "docs://pages/intro", mime: "text/markdown; charset=utf-8", text: "# Intro\n"},
		{uri: "test://gone", err: "not found"},
		{uri: "docs://pages/..", err: `{name} is ".."`},
		{uri: "docs://pages/missing", err: "not found"},
	} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: tc.uri})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.uri, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		c := res.Contents[0]
		if c.URI != tc.uri || c.MIMEType != tc.mime || c.Text != tc.text || string(c.Blob) != tc.blob {
			t.Errorf("%s: contents = %+v", tc.uri, c)
		}
	}
}
