package compact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/compact"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
)

// Compact mode over the built-in tools: the three tools are registered in a
// registry of their own and run through a runner of their own, which keeps
// full outputs where the inner runner does.
func Example() {
	dir, _ := os.MkdirTemp("", "compact-example")
	defer os.RemoveAll(dir)
	core, closer := tools.Core()
	defer closer.Close()
	bridge, _ := fsbridge.OpenLocal(dir)
	defer bridge.Close()
	inner := invoke.New(core, &tool.Context{Identity: tool.Identity{Workspace: dir}, FSRoot: dir, FS: bridge})

	c := compact.New(inner, compact.Options{})
	small := registry.New()
	for _, t := range c.Tools() {
		_ = small.Register(t)
	}
	outer := invoke.New(small, &tool.Context{}, invoke.WithOutputs(inner.Context().Outputs),
		invoke.WithConfig(invoke.Config{MaxResultChars: inner.Config().MaxResultChars + 1000}))

	run := func(name, args string) string {
		msg := outer.Run(context.Background(), tool.Call{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
		return msg.Content[0].Text
	}
	fmt.Println(run(compact.SearchName, `{"query":"find files by name","limit":1}`))
	run(compact.CallName, `{"name":"write","arguments":{"path":"docs/a.txt","content":"hello\n"}}`)
	fmt.Println(run(compact.CallName, `{"name":"find","arguments":{"pattern":"*.txt"}}`))
	// Output:
	// Tools for "find files by name", best first:
	// find — Find files and directories in the workspace whose names or paths match a glob, such as "*.go" or "src/**/*_test.ts".
	// tool_describe shows a tool's parameters; tool_call runs it.
	// docs/a.txt
}
