package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func ExampleManager() {
	// An MCP server in this process stands in for one configured with a
	// command or a URL.
	weather := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	closed := false
	mcp.AddTool(weather, &mcp.Tool{
		Name: "forecast", Description: "Tomorrow's weather in a city.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		City string `json:"city"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Sunny in " + in.City}}}, nil, nil
	})

	ctx := context.Background()
	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{"weather": {}}, client.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Transport: func(ctx context.Context, _ string) (mcp.Transport, error) {
			c, s := mcp.NewInMemoryTransports()
			_, err := weather.Connect(ctx, s, nil)
			return c, err
		},
	})
	if err := m.Start(ctx); err != nil {
		panic(err)
	}
	defer m.Stop(ctx)

	for _, meta := range reg.List() {
		fmt.Println(meta.ID, meta.Section, meta.Groups, meta.Risk)
	}
	msg := invoke.New(reg, nil).Run(ctx, tool.Call{ID: "call_1", Name: "weather__forecast", Arguments: []byte(`{"city":"Lisbon"}`)})
	fmt.Println(msg.Content[0].Text)
	// Output:
	// weather__forecast mcp [mcp:weather] low
	// Sunny in Lisbon
}
