package mcp_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/tool"
)

// FirstList stays open through initialize and a call, and closes once a
// client has been given the tool list (servers restore the usual garbage
// collection then).
func TestFirstList(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	srv := mcp.New(f.reg, &tool.Context{Owner: true}, mcp.Options{Logger: quietLog})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		_ = ss.Wait()
	}()
	isClosed := func() bool {
		select {
		case <-srv.FirstList():
			return true
		default:
			return false
		}
	}
	callTool(t, cs, "greet", map[string]any{"name": "Ada"})
	if isClosed() {
		t.Fatal("FirstList closed before any tools/list")
	}
	for range 2 {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if !isClosed() {
			t.Fatal("FirstList still open after tools/list was answered")
		}
	}
}
