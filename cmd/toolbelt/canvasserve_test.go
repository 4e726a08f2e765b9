package main

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeOffersTheCanvas: toolbelt serve serves a canvas, so its MCP
// clients are offered the canvas tool, and a push answers with the
// session's canvas URL on this server.
func TestServeOffersTheCanvas(t *testing.T) {
	t.Parallel()
	environ := sharedEnvironment(t, t.TempDir())
	url := serveHTTP(t, environ, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed := false
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = listed || tl.Name == "canvas"
	}
	if !listed {
		t.Fatal("serve does not offer the canvas tool")
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "canvas", Arguments: map[string]any{"action": "a2ui_push",
		"jsonl": `{"version":"v0.9","createSurface":{"surfaceId":"a","catalogId":"c"}}`}})
	if err != nil || res.IsError {
		t.Fatalf("a2ui_push: %v %s", err, textOf(res))
	}
	if base := strings.TrimSuffix(url, "/mcp") + "/canvas/"; !strings.Contains(textOf(res), base) {
		t.Errorf("a2ui_push does not answer with a canvas URL under %s: %s", base, textOf(res))
	}
}
