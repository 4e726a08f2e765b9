package toolbelt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
)

// TestMCPServesPromptsAndFiles: toolbelt's MCP server serves the prompts
// folder beside toolbelt.yaml (mcp.prompts), the workspace's files and
// the configured resources (mcp.resources, files relative to toolbelt.yaml).
func TestMCPServesPromptsAndFiles(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts", "hello.md"), []byte("---\ndescription: Says hello.\n---\nSay hello.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handbook.md"), []byte("# Handbook\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(filepath.Join(dir, "toolbelt.yaml"), []byte("mcp:\n  resources:\n    - {uri: docs://handbook, file: handbook.md}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	srv, err := tb.MCPServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); _ = ss.Wait() }()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "hello" || list.Prompts[0].Description != "Says hello." {
		t.Fatalf("prompts: %v %+v", err, list)
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "workspace:///notes.txt"})
	if err != nil || res.Contents[0].Text != "the notes" {
		t.Fatalf("workspace file: %v %+v", err, res)
	}
	res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "docs://handbook"})
	if err != nil || res.Contents[0].Text != "# Handbook\n" {
		t.Fatalf("configured resource: %v %+v", err, res)
	}
}
