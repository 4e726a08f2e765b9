// Command hook shows the hooks a runner runs around calls: a
// before_tool_call hook that blocks some calls and rewrites the parameters
// of others, and an after_tool_call hook that observes every call that ran.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
)

func main() {
	// A scratch workspace with one file in it.
	dir, err := os.MkdirTemp("", "hook-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy milk\ncall Ada\n"), 0o644); err != nil {
		panic(err)
	}
	bridge, err := fsbridge.OpenLocal(dir)
	if err != nil {
		panic(err)
	}
	defer bridge.Close()

	reg, closer := tools.Core() // the built-in tools
	defer closer.Close()

	hooks := invoke.NewHooks()
	// Higher priority runs first. A hook that returns an error or panics
	// blocks the call: hooks fail closed.
	// c.Files are the files the call touches, whatever the tool: the paths
	// it names and the files it would change (an apply_patch names them
	// only inside its patch), with links resolved.
	hooks.OnBefore("no-env-files", 10, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		for _, f := range c.Files {
			if strings.HasPrefix(filepath.Base(f), ".env") {
				return invoke.BeforeDecision{Block: true, Reason: "Environment files hold secrets; ask the user for the value you need."}, nil
			}
		}
		return invoke.BeforeDecision{}, nil
	})
	hooks.OnBefore("small-pages", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		if c.Tool == "read" {
			return invoke.BeforeDecision{Params: map[string]any{"limit": 1}}, nil // read one line at a time
		}
		return invoke.BeforeDecision{}, nil
	})
	hooks.OnAfter("log", func(_ context.Context, c invoke.AfterToolCall) error {
		fmt.Printf("after_tool_call: %s %v error=%q\n", c.Tool, c.Params, c.Error)
		return nil
	})

	tc := &tool.Context{Identity: tool.Identity{Workspace: dir}, FSRoot: dir, FS: bridge}
	r := invoke.New(reg, tc, invoke.WithHooks(hooks))
	for _, call := range []tool.Call{
		{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"notes.txt"}`)},
		{ID: "call_2", Name: "read", Arguments: json.RawMessage(`{"path":".env"}`)},
		{ID: "call_3", Name: "apply_patch", Arguments: json.RawMessage(`{"patch":"*** Begin Patch\n*** Add File: config/.env\n+TOKEN=x\n*** End Patch"}`)},
	} {
		msg := r.Run(context.Background(), call)
		fmt.Printf("%s (error: %v)\n%s\n\n", msg.ToolCallID, msg.IsError, strings.TrimSpace(msg.Content[0].Text))
	}
}
