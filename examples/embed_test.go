package examples_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEmbed runs examples/embed as a real MCP client would: a call its
// policy denies is refused with the reason, a write is asked of the client
// and, approved, runs; then the CLI built from this checkout verifies the
// example's audit log, which holds both calls, and undoes the write.
func TestEmbed(t *testing.T) {
	embed, cli := bin(t, "embed"), bin(t, "toolbelt")
	ws, data := t.TempDir(), t.TempDir()
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	client := sdk.NewClient(&sdk.Implementation{Name: "embed-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(embed, ws, data)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	callTool := func(name string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	if out, isErr := callTool("shout", map[string]any{"text": "hi"}); isErr || out != "HI" {
		t.Fatalf("shout: %s", out)
	}
	if out, isErr := callTool("exec", map[string]any{"command": "echo pwned"}); !isErr || !strings.Contains(out, "deny exec") {
		t.Fatalf("exec was not denied with its reason: %s", out)
	}
	if out, isErr := callTool("write", map[string]any{"path": "notes.txt", "content": "after\n"}); isErr || asked.Load() != 1 {
		t.Fatalf("the approved write (asked %d times): %s", asked.Load(), out)
	}
	if b, _ := os.ReadFile(notes); string(b) != "after\n" {
		t.Fatalf("notes.txt after the write = %q", b)
	}
	if err := cs.Close(); err != nil { // the example closes its root and exits
		t.Fatal(err)
	}

	contains(t, run(t, cli, "audit", "verify", "--data", data), "chain intact")
	var records []struct {
		CallID, Tool, ErrorClass string
		IsError                  bool
	}
	if err := json.Unmarshal([]byte(run(t, cli, "audit", "--data", data, "--json")), &records); err != nil {
		t.Fatal(err)
	}
	writeID, denied := "", false
	for _, r := range records {
		switch {
		case r.Tool == "write" && !r.IsError:
			writeID = r.CallID
		case r.Tool == "exec" && r.ErrorClass == "denied":
			denied = true
		}
	}
	if writeID == "" || !denied {
		t.Fatalf("the audit log lacks the denied exec or the approved write: %+v", records)
	}
	run(t, cli, "undo", writeID, "--data", data)
	if b, _ := os.ReadFile(notes); string(b) != "before\n" {
		t.Fatalf("notes.txt after undo = %q, want it restored", b)
	}
}
