package mcp_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/tool"
)

// FirstAnswer stays open through initialize and a ping, and closes once a
// client's first tools/list or tools/call has been answered.
func TestFirstAnswer(t *testing.T) {
	t.Parallel()
	for name, first := range map[string]func(*testing.T, *sdk.ClientSession){
		"tools/list": func(t *testing.T, cs *sdk.ClientSession) {
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		},
		"tools/call": func(t *testing.T, cs *sdk.ClientSession) {
			callTool(t, cs, "greet", map[string]any{"name": "Ada"})
		},
	} {
		t.Run(name, func(t *testing.T) {
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
			answered := func() bool {
				select {
				case <-srv.FirstAnswer():
					return true
				default:
					return false
				}
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if answered() {
				t.Fatal("FirstAnswer closed before any tools/list or tools/call")
			}
			first(t, cs)
			if !answered() {
				t.Fatalf("FirstAnswer still open after %s was answered", name)
			}
		})
	}
}
