package dir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// writeTool writes a tool folder under parent: files by name; a file whose
// name starts with "+" is made executable (without the "+").
func writeTool(t testing.TB, parent, name string, files map[string]string) string {
	t.Helper()
	folder := filepath.Join(parent, name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(n, "+") {
			n, mode = n[1:], 0o755
		}
		if err := os.WriteFile(filepath.Join(folder, n), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return folder
}

// meta returns a metadata.json for a tool called name with extra fields.
func meta(name string, extra map[string]any) string {
	m := map[string]any{"name": name, "description": "A test tool called " + name + "."}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b)
}

const objectSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// shTool is a tool whose sh handler runs script (after reading the request
// into $req).
func shTool(t testing.TB, parent, name, script string, extra map[string]any) string {
	return writeTool(t, parent, name, map[string]string{
		"metadata.json": meta(name, extra),
		"schema.json":   objectSchema,
		"handler.sh":    "req=$(cat)\n" + script + "\n",
	})
}

// harness runs calls to directory tools through the real pipeline.
type harness struct {
	dirTools  []*Tool
	reg       *registry.Registry
	runner    *invoke.Runner
	workspace string
}

func newHarness(t testing.TB, folders []string, opts Options, ropts ...invoke.Option) *harness {
	t.Helper()
	reg := registry.New()
	var loaded []*Tool
	for _, f := range folders {
		dt, err := Load(f, opts)
		if err != nil {
			t.Fatalf("Load(%s): %v", f, err)
		}
		if err := reg.Register(dt.Tool()); err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, dt)
	}
	ws := t.TempDir()
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws, SessionKey: "s1", AgentID: "a1"}}
	return &harness{dirTools: loaded, reg: reg, runner: invoke.New(reg, tc, ropts...), workspace: ws}
}

func (h *harness) call(ctx context.Context, name, args string, opts ...invoke.CallOption) tool.ResultMessage {
	return h.runner.Run(ctx, tool.Call{ID: "call_1", Name: name, Arguments: json.RawMessage(args)}, opts...)
}

func text(msg tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range msg.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
