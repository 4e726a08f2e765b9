// Command embed (usage: embed WORKSPACE DATADIR) serves a typed tool beside the built-ins over MCP on stdio.
package main

import (
	"context"
	"log"
	"os"
	"strings"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/tool"
)

type shoutArgs struct {
	Text string `json:"text" jsonschema:"The text to say in capitals"`
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal("embed: ", err)
	}
}

func run(ctx context.Context) error {
	shout := tool.Must(tool.New("shout", "Say a text in capitals.", func(_ context.Context, in shoutArgs, _ tool.Invocation) (tool.Result, error) {
		return tool.Text(strings.ToUpper(in.Text)), nil
	}))
	shout.Meta = tool.Meta{ReadOnly: true}
	cfg, err := config.Parse("embed", []byte("tools: {deny: [exec], ask: [{tool: write}]}"))
	if err != nil {
		return err
	}
	tb, err := toolbelt.Open(ctx, toolbelt.Options{Config: cfg, Workspace: os.Args[1], DataDir: os.Args[2], Tools: []tool.Tool{shout}})
	if err != nil {
		return err
	}
	defer tb.Close(ctx)
	return tb.ServeStdio(ctx)
}
