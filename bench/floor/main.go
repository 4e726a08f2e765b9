// Command floor is the floor of the benchmarks: a minimal MCP server on the
// same Go SDK as Toolbelt, with one tool, read, that returns a file of its
// directory. Everything Toolbelt spends beyond it is Toolbelt's own cost
// (validation, policy, audit, shaping, the tool catalog).
//
//	floor -dir DIR            serve on stdio
//	floor -dir DIR -http ADDR serve streamable HTTP at ADDR/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type readArgs struct {
	Path string `json:"path" jsonschema:"file to read, relative to the served directory"`
}

func main() {
	dir := flag.String("dir", ".", "directory the read tool serves")
	addr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	root, err := os.OpenRoot(*dir)
	if err != nil {
		log.Fatal(err)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "floor", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "read", Description: "Read a text file."}, func(_ context.Context, _ *sdk.CallToolRequest, in readArgs) (*sdk.CallToolResult, any, error) {
		b, err := root.ReadFile(filepath.Clean(in.Path))
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil, nil
	})
	if *addr == "" {
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	log.Fatal(http.Serve(ln, mux))
}
