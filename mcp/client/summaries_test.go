package client_test

import (
	"testing"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/tool"
)

// TestImportedSummaries: mcpServers.<name>.summaries, keyed by the
// server's own tool names, become the imported tools' Meta.Summary (the
// line compact mode lists them by); a tool without one keeps none, and a
// name the server does not have is ignored.
func TestImportedSummaries(t *testing.T) {
	t.Parallel()
	hs := httpServer(t, newTestServer(false), "s3cret")
	srv := config.MCPServer{URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"},
		Summaries: map[string]string{"echo": "Say the text back.", "no_such_tool": "Never used."}}
	_, reg := start(t, map[string]config.MCPServer{"t": srv}, client.Options{})
	if m, ok := reg.Meta("t__echo"); !ok || m.Summary != "Say the text back." {
		t.Errorf("t__echo's meta: %+v", m)
	}
	if m, ok := reg.Meta("t__add"); !ok || m.Summary != "" {
		t.Errorf("t__add has a summary: %+v", m)
	}
	for _, tt := range reg.ResolveAll(&tool.Context{}, nil) {
		if tt.Name == "t__echo" && tt.Meta.Summary != "Say the text back." {
			t.Errorf("the resolved t__echo has summary %q", tt.Meta.Summary)
		}
	}
}
