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
			srv := mcp.New(newFixture(t).reg, &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog})
			t.Cleanup(srv.Close)
			cs := connectTo(t, srv, nil, nil)
			answered := func() bool {
				select {
				case <-srv.FirstAnswer():
					return true
				default:
					return false
				}
			}
			if err := cs.Ping(context.Background(), nil); err != nil {
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
