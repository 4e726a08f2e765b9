// Command import imports the tools of another MCP server into a registry
// and calls them through Toolbelt's pipeline, as `toolbelt serve` does with
// the servers under mcpServers in toolbelt.yaml. The server is
// examples/mcp-server, started over stdio with `go run` (run this from the
// root of a checkout), or the command given as arguments.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "import:", err)
		os.Exit(1)
	}
}

func run() error {
	server := config.MCPServer{Command: "go", Args: []string{"run", "./examples/mcp-server", "examples/workspace"}}
	if len(os.Args) > 1 {
		server = config.MCPServer{Command: os.Args[1], Args: os.Args[2:]}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{"words": server}, client.Options{
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		ConnectTimeout: time.Minute, // `go run` may compile the server first
	})
	defer m.Stop(ctx)
	if err := m.Start(ctx); err != nil {
		return err
	}
	if st := m.Status()[0]; st.State != client.StateReady {
		return fmt.Errorf("the server is %s: %s", st.State, st.LastError)
	}

	// The imported tools are named <server>__<tool>, in the mcp section,
	// with a risk derived from the server's annotations.
	for _, meta := range reg.List() {
		fmt.Printf("%-20s %-4s %s\n", meta.ID, meta.Section, meta.Risk)
	}
	r := invoke.New(reg, nil)
	for _, call := range []tool.Call{
		{ID: "call_1", Name: "words__word_count", Arguments: json.RawMessage(`{"text":"one governed pipeline"}`)},
		{ID: "call_2", Name: "words__grep", Arguments: json.RawMessage(`{"pattern":"func "}`)},
		{ID: "call_3", Name: "words__word_count", Arguments: json.RawMessage(`{"txt":"typo"}`)},
	} {
		msg := r.Run(ctx, call)
		fmt.Printf("\n%s %s (error: %v)\n%s\n", msg.ToolCallID, msg.ToolName, msg.IsError, strings.TrimSpace(msg.Content[0].Text))
	}
	return nil
}
