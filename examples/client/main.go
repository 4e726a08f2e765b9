// Command client is a Go program using Toolbelt's tools over MCP: it starts
// `toolbelt mcp` with the MCP Go SDK's client, lists the tools and calls
// two of them. Run it from the root of a checkout with toolbelt on PATH
// (`go install ./cmd/toolbelt`); the workspace is the first argument, else
// examples/workspace.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := "examples/workspace"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cmd := exec.Command("toolbelt", "mcp", "--workspace", dir)
	client := mcp.NewClient(&mcp.Implementation{Name: "my-agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Println("tools:", strings.Join(names, " "))

	for _, call := range []mcp.CallToolParams{
		{Name: "grep", Arguments: map[string]any{"pattern": "greeting"}},
		{Name: "read", Arguments: map[string]any{"path": "../../etc/passwd"}},
	} {
		res, err := session.CallTool(ctx, &call)
		if err != nil {
			return err
		}
		fmt.Printf("\n%s (error: %v)\n", call.Name, res.IsError)
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				fmt.Println(t.Text)
			}
		}
	}
	return nil
}
