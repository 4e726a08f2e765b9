// Command mcp-server serves a registry of its own over MCP on stdin and
// stdout: one tool written here (word_count) beside the built-in file tools,
// every call going through Toolbelt's pipeline. Start it from an MCP client
// (see examples/client, or `toolbelt mcp servers` with it configured under
// mcpServers); the workspace is the first argument, else the current
// directory. Logs go to stderr: stdout is the MCP channel.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/fs"
)

type countArgs struct {
	Text string `json:"text" jsonschema:"The text to count the words of"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-server:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	bridge, err := fsbridge.OpenLocal(dir)
	if err != nil {
		return err
	}
	defer bridge.Close()

	reg := registry.New()
	if err := fs.Register(reg); err != nil { // read, write, edit, ls, find, grep, …
		return err
	}
	count := tool.Must(tool.New("word_count", "Count the words of a text.",
		func(_ context.Context, in countArgs, _ tool.Invocation) (tool.Result, error) {
			return tool.Textf("%d words", len(strings.Fields(in.Text))), nil
		}))
	count.Meta = tool.Meta{ReadOnly: true, Idempotent: true}
	if err := reg.Register(count); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tc := &tool.Context{Identity: tool.Identity{Workspace: bridge.Root()}, FSRoot: bridge.Root(), FS: bridge}
	srv := mcp.New(reg, tc, mcp.Options{
		Name:    "word-tools",
		Version: "1",
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	defer srv.Close()
	return srv.ServeStdio(ctx, mcp.StdioOptions{})
}
