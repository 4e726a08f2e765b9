// Command client is the MCP conformance suite's client under test: it
// imports the server at the URL it is given the way toolbelt.yaml's
// mcpServers do (package mcp/client: connect, list, register the tools) and
// calls every imported tool through the pipeline, as an agent would.
//
// The suite (@modelcontextprotocol/conformance) runs it as `client URL` with
// the scenario's name in $MCP_CONFORMANCE_SCENARIO; cmd/toolbelt's
// TestConformanceClient drives it. It exits non-zero when the server's tools
// could not be imported.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// serverName is the imported server's name: its tools are serverName__TOOL.
const serverName = "conformance"

// arguments are the arguments of the scenarios' tools that take some; the
// others are called with none.
var arguments = map[string]string{
	"add_numbers": `{"a": 5, "b": 3}`,
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// run imports the server at url and calls each of its tools once, logging
// to log.
func run(ctx context.Context, url string, log io.Writer) error {
	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{serverName: {URL: url}}, client.Options{
		Logger:  slog.New(slog.NewTextHandler(log, nil)),
		Version: "conformance",
	})
	if err := m.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = m.Stop(context.Background()) }()
	for _, st := range m.Status() {
		if st.State != client.StateReady {
			return fmt.Errorf("server %s is %s: %s", st.Name, st.State, st.LastError)
		}
	}
	runner := invoke.New(reg, nil)
	for _, meta := range reg.List() {
		remote := meta.ID[len(serverName)+len(client.DefaultSeparator):]
		args := arguments[remote]
		if args == "" {
			args = "{}"
		}
		msg := runner.Run(ctx, tool.Call{ID: "conformance_" + remote, Name: meta.ID, Arguments: []byte(args)})
		fmt.Fprintf(log, "%s: error %v: %d content blocks\n", meta.ID, msg.IsError, len(msg.Content))
	}
	return nil
}
