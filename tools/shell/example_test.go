package shell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// A command that waits for input outlives exec's yieldMs and continues in
// the background; the process tool writes to it and polls it.
func Example() {
	reg := registry.New()
	m, err := shell.Register(reg)
	if err != nil {
		panic(err)
	}
	defer m.Close() // stops whatever is still running

	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// exec is high risk, so every call needs a person's approval; this
	// example has nobody to ask and approves every call itself.
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: dir}, FSRoot: dir}, invoke.WithConfirmer(invoke.AutoApprove))

	var id string
	call := func(name string, args map[string]any) {
		raw, _ := json.Marshal(args)
		msg := r.Run(context.Background(), tool.Call{ID: "1", Name: name, Arguments: raw})
		if d, _ := json.Marshal(msg.Details); id == "" {
			var info struct{ SessionID string }
			_ = json.Unmarshal(d, &info)
			id = info.SessionID
		}
		// Session ids and pids differ from run to run.
		text := strings.ReplaceAll(msg.Content[0].Text, id, "…")
		fmt.Printf("%s:\n%s\n\n", name, regexp.MustCompile(`pid \d+`).ReplaceAllString(text, "pid N"))
	}
	call("exec", map[string]any{"command": `echo "What is your name?"; read -r name; echo "Hello, $name."`, "yieldMs": 1000})
	call("process", map[string]any{"action": "write", "sessionId": id, "data": "Ada\n"})
	call("process", map[string]any{"action": "poll", "sessionId": id, "timeout": 10_000})
	// Output:
	// exec:
	// What is your name?
	//
	// Command is still running after 1s and continues in the background (session …, pid N). It will be stopped if still running after its timeout of 2m0s.
	// Follow it with the process tool: {"action":"poll","sessionId":"…","timeout":30000} waits up to 30 s and returns new output and the exit status; {"action":"log","sessionId":"…"} shows its output; {"action":"write","sessionId":"…","data":"..."} sends input; {"action":"kill","sessionId":"…"} stops it.
	//
	// process:
	// Wrote 4 bytes to session …. Use {"action":"poll"} to see what it printed.
	//
	// process:
	// Hello, Ada.
	//
	// (Command exited with code 0)
}
