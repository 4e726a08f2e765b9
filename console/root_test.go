package console_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/tool"
)

// pageYAML is the configuration of the tests' roots: a policy with a deny
// and an ask rule, so verdicts differ by tool and caller.
const pageYAML = `
tools:
  deny: [exec]
  ask:
    - tool: write
agents:
  reader:
    tools:
      deny: [read]
`

// openRoot opens a real root on a temp workspace and SQLite store, with
// the configuration yaml and tools beside the built-ins; it is closed
// when the test ends.
func openRoot(t testing.TB, yaml string, tools ...tool.Tool) *toolbelt.Toolbelt {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir(), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	return tb
}

// waitingTool is an async tool whose work never ends: its jobs stay in
// flight (no root here works them).
func waitingTool() tool.Tool {
	return tool.Tool{Name: "render_video", Description: "Renders a video (test).", Async: &tool.AsyncSpec{Type: tool.AsyncPolling}, Handler: never{},
		Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"title": {Type: "string", Description: "The video's title."}}}}
}

type never struct{}

func (never) Submit(context.Context, tool.AsyncSubmit) (string, error) { return "ext", nil }
func (never) Poll(context.Context, string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncProcessing}, nil
}
func (never) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, nil
}

// waitLogged waits until the audit log's database holds the record of a
// call: the root's spool moves records into it in the background.
func waitLogged(t *testing.T, tb *toolbelt.Toolbelt, callID string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		rs, err := tb.AuditLog().List(context.Background(), auditlog.Filter{CallID: callID})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) > 0 {
			return
		}
	}
	t.Fatalf("the record of call %s did not reach the audit log", callID)
}
