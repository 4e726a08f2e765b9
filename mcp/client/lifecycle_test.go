package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/lifecycle/lifecycletest"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

var _ lifecycle.Service = (*client.Manager)(nil)

// slowImport is a manager importing, from a server in this process, a tool
// "slow" that answers once released (or its call is cancelled); a call of
// it has started when slowImport returns.
func slowImport(t *testing.T) (m *client.Manager, release chan struct{}, result <-chan tool.ResultMessage) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "slow", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(entered)
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	reg := registry.New()
	m = client.New(reg, map[string]config.MCPServer{"s": {}}, client.Options{
		Logger: testLogger(t),
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
	r := runner(reg)
	t.Cleanup(r.Close)
	results := make(chan tool.ResultMessage, 1)
	go func() { results <- run(t, r, "s__slow", `{}`) }()
	<-entered
	return m, release, results
}

// TestStopLetsCallsFinish: Stop refuses new calls at once, lets the call
// under way finish, and then stops the server.
func TestStopLetsCallsFinish(t *testing.T) {
	t.Parallel()
	m, release, results := slowImport(t)
	ctx, waiting := lifecycletest.Watched(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- m.Stop(ctx) }()
	<-waiting
	close(release)
	if msg := <-results; msg.IsError || !strings.Contains(text(msg.Content), "done") {
		t.Errorf("the call under way: %+v", msg)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop = %v", err)
	}
	if st := m.Status()[0]; st.State != client.StateStopped {
		t.Errorf("after Stop: %+v", st)
	}
}

// TestStopCutsCallsWhenContextEnds: once Stop's context has ended, the
// call under way is cancelled, and Stop reports the cut. (The caller's
// goroutine hands its result over a moment after the manager's call has
// ended and Stop may have returned, so the result is waited for.)
func TestStopCutsCallsWhenContextEnds(t *testing.T) {
	t.Parallel()
	m, _, results := slowImport(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v, want the context's error", err)
	}
	select {
	case msg := <-results:
		if !msg.IsError || !strings.Contains(text(msg.Content), "mcp server s was stopped during the call") {
			t.Errorf("the call cut short: %+v", msg)
		}
	case <-time.After(30 * time.Second):
		t.Error("the call Stop cut short went on")
	}
}
