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
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	dir := flag.String("corpus", "testdata/mcp-tools,schema/testdata/corpus", "directories of tools/list answers, comma-separated")
	n := flag.Int("n", 1000, "tools to serve")
	flag.Parse()
	schemas, err := load(*dir)
	if err != nil {
		log.Fatal(err)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "manytools", Version: "1"}, nil)
	echo := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	for i := range *n {
		c := schemas[i%len(schemas)]
		s.AddTool(&sdk.Tool{Name: fmt.Sprintf("%s_%d", c.name, i), Description: c.description, InputSchema: c.schema}, echo)
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		log.Fatal(err)
	}
}

type corpusTool struct {
	name, description string
	schema            json.RawMessage
}

func load(dirs string) ([]corpusTool, error) {
	var files []string
	for dir := range strings.SplitSeq(dirs, ",") {
		found, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(found) == 0 {
			return nil, fmt.Errorf("no corpus files in %s", dir)
		}
		files = append(files, found...)
	}
	var out []corpusTool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var server struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &server); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, t := range server.Tools {
			out = append(out, corpusTool{t.Name, t.Description, t.InputSchema})
		}
	}
	return out, nil
}
