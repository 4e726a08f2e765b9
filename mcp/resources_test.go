package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// resourceServer serves the file tools, result_read and a tool with a long
// result over a workspace holding a few files, with the prompts of
// promptFiles, under p.
func resourceServer(t *testing.T, p *policy.Policy, promptFiles map[string]string) *mcp.Server {
	t.Helper()
	ws := t.TempDir()
	for name, body := range map[string]string{"notes.txt": "hello from the workspace\n", "sub/a.go": "package a\n", "sub/b.go": "package a\n", ".hidden": "x", "pixel.bin": "\x00\x01\x02"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
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
	if err := sessions.Register(reg); err != nil {
		t.Fatal(err)
	}
	long := tool.Must(tool.New("long", "Returns a long text.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text(strings.Repeat("0123456789", 20000) + "THE END"), nil
	}))
	long.Meta.ReadOnly = true
	if err := reg.Register(long); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range promptFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prompts, err := mcp.LoadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws, Owner: true}, FSRoot: ws, FS: b}
	srv := mcp.New(reg, tc, mcp.Options{Logger: quietLog, ExposeDetails: true, Prompts: prompts}, invoke.WithPolicy(p))
	t.Cleanup(srv.Close)
	return srv
}

func readResource(cs *sdk.ClientSession, uri string) (*sdk.ReadResourceResult, error) {
	return cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
}

// TestWorkspaceResources: the workspace's files are resources, read
// through the file bridge (text as text, bytes as a blob), confined to the
// workspace, refused when the policy refuses read; their paths complete.
func TestWorkspaceResources(t *testing.T) {
	t.Parallel()
	cs := connectTo(t, resourceServer(t, &policy.Policy{}, nil), nil, nil)
	ctx := context.Background()

	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range templates.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	if !slices.Equal(uris, []string{mcp.OutputsTemplate, mcp.FilesTemplate}) && !slices.Equal(uris, []string{mcp.FilesTemplate, mcp.OutputsTemplate}) {
		t.Errorf("templates %v", uris)
	}

	res, err := readResource(cs, "workspace:///notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents[0]; c.Text != "hello from the workspace\n" || !strings.HasPrefix(c.MIMEType, "text/plain") || c.URI != "workspace:///notes.txt" {
		t.Errorf("notes.txt: %+v", c)
	}
	res, err = readResource(cs, "workspace:///pixel.bin")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents[0]; string(c.Blob) != "\x00\x01\x02" || c.Text != "" {
		t.Errorf("pixel.bin: %+v", c)
	}
	for uri, want := range map[string]string{
		"workspace:///missing.txt":      "not found",
		"workspace:///../../etc/passwd": "above the workspace root",
		"workspace:///sub":              "directory",
	} {
		if _, err := readResource(cs, uri); err == nil || !strings.Contains(strings.ToLower(err.Error()), want) {
			t.Errorf("%s: err = %v, want %q", uri, err, want)
		}
	}

	for value, want := range map[string][]string{"": {"notes.txt", "pixel.bin", "sub/"}, "su": {"sub/"}, "sub/": {"sub/a.go", "sub/b.go"}, ".h": {".hidden"}} {
		c, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: mcp.FilesTemplate}, Argument: sdk.CompleteParamsArgument{Name: "path", Value: value}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Completion.Values, want) {
			t.Errorf("complete %q = %v, want %v", value, c.Completion.Values, want)
		}
	}

	denied := connectTo(t, resourceServer(t, &policy.Policy{Tools: policy.Rules{Deny: []string{"read", "ls"}}}, nil), nil, nil)
	if _, err := readResource(denied, "workspace:///notes.txt"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("read denied by the policy, the resource was served: %v", err)
	}
	if _, err := denied.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: mcp.FilesTemplate}, Argument: sdk.CompleteParamsArgument{Name: "path", Value: ""}}); err == nil {
		t.Error("ls denied by the policy, the workspace's names were completed")
	}
}

// TestKeptOutputResources: the full output of a result the pipeline cut
// short is a resource of the client session that made the call (over
// HTTP, where sessions have ids), and of no other.
func TestKeptOutputResources(t *testing.T) {
	t.Parallel()
	srv := resourceServer(t, &policy.Policy{}, nil)
	ts := httptest.NewServer(srv.Handler(mcp.HTTPOptions{Addr: "127.0.0.1:0", Token: "s3cret"}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	connect := func() *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	cs := connect()
	res := callTool(t, cs, "long", map[string]any{})
	details, _ := res.StructuredContent.(map[string]any)
	truncated, _ := details["truncated"].(map[string]any)
	id, _ := truncated["callId"].(string)
	if id == "" {
		t.Fatalf("the long result was not cut short: %v", res.StructuredContent)
	}
	uri := "toolbelt://outputs/" + id
	out, err := readResource(cs, uri)
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Contents[0].Text; len(text) != 200007 || !strings.HasSuffix(text, "THE END") {
		t.Errorf("kept output: %d characters, ends %q", len(text), text[max(0, len(text)-10):])
	}
	other := connect()
	if _, err := readResource(other, uri); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another session read the kept output: %v", err)
	}
}

// TestPrompts: the prompts folder's Markdown files are prompts, their
// front matter's arguments filled in and completed.
func TestPrompts(t *testing.T) {
	t.Parallel()
	srv := resourceServer(t, &policy.Policy{}, map[string]string{
		"review.md": "---\ntitle: Review\ndescription: Review a file.\narguments:\n  - name: path\n    description: The file.\n    required: true\n    path: true\n  - name: focus\n    values: [security, performance, style]\n---\nReview {{path}}, looking at {{focus}} first.\n",
		"hello.md":  "Say hello.\n",
		"notes.txt": "not a prompt",
	})
	cs := connectTo(t, srv, nil, nil)
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
		if p.Name == "review" && (p.Title != "Review" || len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required) {
			t.Errorf("review listed as %+v", p)
		}
	}
	if !slices.Equal(names, []string{"hello", "review"}) {
		t.Errorf("prompts %v", names)
	}
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review", Arguments: map[string]string{"path": "notes.txt", "focus": "security"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Messages[0].Content.(*sdk.TextContent).Text; text != "Review notes.txt, looking at security first.\n" || got.Messages[0].Role != "user" {
		t.Errorf("review: %q", text)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review", Arguments: map[string]string{"focus": "style"}}); err == nil || !strings.Contains(err.Error(), `needs the argument "path"`) {
		t.Errorf("without its required argument: %v", err)
	}
	for arg, want := range map[[2]string][]string{{"focus", "s"}: {"security", "style"}, {"focus", ""}: {"security", "performance", "style"}, {"path", "n"}: {"notes.txt"}} {
		c, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "review"}, Argument: sdk.CompleteParamsArgument{Name: arg[0], Value: arg[1]}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Completion.Values, want) {
			t.Errorf("complete %v = %v, want %v", arg, c.Completion.Values, want)
		}
	}
}

// TestPromptFileErrors: a prompt file whose front matter cannot be read
// is an error naming the file.
func TestPromptFileErrors(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"unknown key": "---\ndescriptio: typo\n---\ntext",
		"no name":     "---\narguments:\n  - description: nameless\n---\ntext",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := mcp.LoadPrompts(dir); err == nil || !strings.Contains(err.Error(), "p.md") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
