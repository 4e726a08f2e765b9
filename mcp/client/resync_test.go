package client_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestResyncComparesDefinitions: when a server's tool list changes, a tool
// whose definition is the same stays registered as it was (the same tool
// value, not registered again), a changed one is replaced, a new one added,
// a gone one removed, and a tool left out because its schema does not
// compile stays left out while its definition is the same. The first sync
// encodes no definition; this is what the encoding, done later, must
// still tell apart.
func TestResyncComparesDefinitions(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "defs", Version: "1"}, nil)
	handler := func(name string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		}
	}
	addTool := func(name, description, schema string) {
		srv.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(schema)}, handler(name))
	}
	addTool("same", "Stays.", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	addTool("changes", "Changes.", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	addTool("goes", "Goes.", `{"type":"object"}`)
	addTool("bad", "Does not compile.", `{"type":"object","properties":{"n":{"type":"integral"}}}`)

	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{"d": {}}, client.Options{
		Logger:           testLogger(t),
		SchemaCheckDelay: -1,
		Transport: func(ctx context.Context, _ string) (mcp.Transport, error) {
			c, s := mcp.NewInMemoryTransports()
			_, err := srv.Connect(ctx, s, nil)
			return c, err
		},
	})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	resolve := func(name string) (tool.Tool, bool) { return reg.Resolve(name, nil, nil) }
	waitFor(t, reg, "the schema check to leave out d__bad", func() bool { return !reg.Has("d__bad") })
	same, ok := resolve("d__same")
	if !ok {
		t.Fatal("d__same not imported")
	}
	before, _ := resolve("d__changes")

	addTool("changes", "Changed.", `{"type":"object","properties":{"b":{"type":"integer"}}}`)
	addTool("fresh", "New.", `{"type":"object"}`)
	srv.RemoveTools("goes")
	waitFor(t, reg, "the re-import", func() bool { return reg.Has("d__fresh") && !reg.Has("d__goes") })
	// The three changes reach the client in one notification or several:
	// wait for the last one to be followed.
	waitFor(t, reg, "d__changes to be replaced", func() bool {
		now, ok := resolve("d__changes")
		return ok && now.Description == "Changed."
	})

	after, _ := resolve("d__same")
	if after.Params() != same.Params() || after.Description != same.Description {
		t.Errorf("d__same was imported again though its definition did not change")
	}
	changed, _ := resolve("d__changes")
	if changed.Params() == before.Params() || changed.Params().Properties["b"] == nil || changed.Params().Properties["a"] != nil {
		t.Errorf("d__changes has the old schema: %+v", changed.Params())
	}
	if reg.Has("d__bad") {
		t.Errorf("d__bad, whose schema does not compile, was imported again though its definition did not change")
	}
	st := m.Status()
	if len(st) != 1 || st[0].Tools != 3 || len(st[0].Skipped) != 1 || !strings.HasPrefix(st[0].Skipped[0], "bad: input schema does not compile") {
		t.Errorf("status %+v", st)
	}
	var names []string
	for _, meta := range reg.List() {
		names = append(names, meta.ID)
	}
	if want := []string{"d__changes", "d__fresh", "d__same"}; !slices.Equal(names, want) {
		t.Errorf("registry holds %v, want %v", names, want)
	}
}
