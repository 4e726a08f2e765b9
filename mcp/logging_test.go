//lint:file-ignore SA1019 it tests MCP logging, deprecated in the protocol of 2026-07-28 but what clients of 2025-11-25 (the conformance suite's) use

package mcp_test

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestToolLogsReachTheClient: tool.Log lines go to the client as
// notifications/message, from the level it set up (logging/setLevel).
func TestToolLogsReachTheClient(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	chatty := tool.Must(tool.New("chatty", "Logs as it works.", func(ctx context.Context, _ struct{}, _ tool.Invocation) (tool.Result, error) {
		tool.Log(ctx, "debug", "details nobody asked for")
		tool.Log(ctx, "info", "started")
		tool.Log(ctx, "warning", "almost out of disk")
		return tool.Text("done"), nil
	}))
	chatty.Meta.ReadOnly = true
	if err := reg.Register(chatty); err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(reg, &tool.Context{}, mcp.Options{Logger: quietLog})
	t.Cleanup(srv.Close)
	got := make(chan *sdk.LoggingMessageParams, 10)
	cs := connectTo(t, srv, &sdk.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
		got <- req.Params
	}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // logging/setLevel's version
	// Before the client sets a level, nothing is sent.
	if res := callTool(t, cs, "chatty", map[string]any{}); res.IsError {
		t.Fatalf("call: %s", texts(res))
	}
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, cs, "chatty", map[string]any{}); res.IsError {
		t.Fatalf("call: %s", texts(res))
	}
	for _, want := range []struct{ level, data string }{{"info", "started"}, {"warning", "almost out of disk"}} {
		select {
		case p := <-got:
			if string(p.Level) != want.level || p.Data != want.data || p.Logger != "chatty" {
				t.Errorf("log message = %+v, want %s %q from chatty", p, want.level, want.data)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no log message %q", want.data)
		}
	}
	select {
	case p := <-got:
		t.Errorf("unexpected log message %+v", p)
	default:
	}
}
