package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/fs"
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

// TestPromptEmbeds: a prompt's embed reads the server's own resources as
// the client would — a workspace file under the read policy, a configured
// resource, a URI from an argument — and puts them before its text: an
// image as an image, the rest as embedded resources.
func TestPromptEmbeds(t *testing.T) {
	t.Parallel()
	ws, dir := t.TempDir(), t.TempDir()
	for file, body := range map[string]string{
		filepath.Join(ws, "notes.txt"):  "workspace notes\n",
		filepath.Join(ws, "secret.txt"): "do not embed\n",
		filepath.Join(dir, "pixel.png"): "\x89PNG\r\n\x1a\nnot really",
		filepath.Join(dir, "look.md"):   "---\ndescription: Look.\nembed: [workspace:///notes.txt, test://pixel]\n---\nLook at these.\n",
		filepath.Join(dir, "any.md"):    "---\ndescription: Any.\narguments:\n  - {name: uri, required: true}\nembed: ['{{uri}}']\n---\n",
	} {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	reg := registry.New()
	if err := fs.Register(reg); err != nil {
		t.Fatal(err)
	}
	prompts, err := mcp.LoadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws, Owner: true}, FSRoot: ws, FS: b}
	p := &policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{{Tools: []string{"read"}, When: map[string][]string{"path": {"secret*"}}}}}}
	srv := mcp.New(reg, tc, mcp.Options{Logger: quietLog, Prompts: prompts, Resources: []mcp.Resource{
		{URI: "test://pixel", File: filepath.Join(dir, "pixel.png")},
		{URI: "test://words", Text: "configured words"},
	}}, invoke.WithPolicy(p))
	t.Cleanup(srv.Close)
	cs := connectTo(t, srv, nil, nil)
	ctx := context.Background()
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "look"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 3 {
		t.Fatalf("messages = %+v", res.Messages)
	}
	if r, ok := res.Messages[0].Content.(*sdk.EmbeddedResource); !ok || r.Resource.URI != "workspace:///notes.txt" || r.Resource.Text != "workspace notes\n" {
		t.Errorf("first message = %+v", res.Messages[0].Content)
	}
	if img, ok := res.Messages[1].Content.(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG\r\n\x1a\nnot really" {
		t.Errorf("second message = %+v", res.Messages[1].Content)
	}
	if txt, ok := res.Messages[2].Content.(*sdk.TextContent); !ok || txt.Text != "Look at these.\n" {
		t.Errorf("third message = %+v", res.Messages[2].Content)
	}
	res, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "any", Arguments: map[string]string{"uri": "test://words"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res.Messages[0].Content.(*sdk.EmbeddedResource); len(res.Messages) != 1 || !ok || r.Resource.Text != "configured words" {
		t.Errorf("any(test://words) = %+v", res.Messages)
	}
	for uri, want := range map[string]string{
		"workspace:///secret.txt": "prompt any embeds workspace:///secret.txt: refused",
		"test://nowhere":          "prompt any embeds test://nowhere",
	} {
		if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "any", Arguments: map[string]string{"uri": uri}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("any(%s): err = %v, want %q", uri, err, want)
		}
	}
}
