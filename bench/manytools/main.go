// Command manytools is an MCP server on stdio with many tools (1,000 by
// default), to measure importing them: their schemas cycle through the
// corpus of real and realistic tool schemas (testdata/mcp-tools and
// schema/testdata/corpus), so the
// import sees defaults, enums, unions and references. Its tools only echo
// their arguments.
//
//	manytools -n 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

func main() {
	dir := flag.String("corpus", harness.CorpusDirs, "directories of tools/list answers, comma-separated")
	n := flag.Int("n", 1000, "tools to serve")
	flag.Parse()
	schemas, err := harness.Corpus(*dir)
	if err != nil {
		log.Fatal(err)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "manytools", Version: "1"}, nil)
	echo := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	for i := range *n {
		c := schemas[i%len(schemas)]
		s.AddTool(&sdk.Tool{Name: fmt.Sprintf("%s_%d", c.Name, i), Description: c.Description, InputSchema: c.InputSchema}, echo)
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		log.Fatal(err)
	}
}
