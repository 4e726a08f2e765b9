package toolbelt_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// asking is a tool that always asks before it runs.
var asking = func() tool.Tool {
	t := tool.Must(tool.New("ping", "Pings.", func(context.Context, stepArgs, tool.Invocation) (tool.Result, error) {
		return tool.Text("pong"), nil
	}))
	t.Meta = tool.Meta{RequiresConfirmation: true}
	return t
}()

// openWaiting opens a root whose calls ask the console (no Options.Confirm)
// with the configuration yaml, and a second store on its database, as the
// console's process has.
// o adds to the root's options (a logger).
func openWaiting(t *testing.T, yaml string, o toolbelt.Options) (*toolbelt.Toolbelt, *store.Store, string) {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ws, data := t.TempDir(), t.TempDir()
	o.Config, o.Workspace, o.DataDir, o.Tools = cfg, ws, data, []tool.Tool{asking}
	tb, err := toolbelt.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	console, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { console.Close() })
	return tb, console, ws
}

// ping calls ping through the root's runner r in session and returns
// the result's text.
func ping(ctx context.Context, r *invoke.Runner, id, session string) string {
	ctx = invoke.WithCaller(ctx, tool.Identity{Channel: "cron", SessionKey: session})
	msg := r.Run(ctx, tool.Call{ID: id, Name: "ping", Arguments: json.RawMessage(`{"token":"sk-live-0123456789abcdef0123"}`)})
	return msg.Content[0].Text
}

// runner returns a runner of tb.
func runner(t *testing.T, tb *toolbelt.Toolbelt) *invoke.Runner {
	t.Helper()
	r, err := tb.Runner(tool.Identity{Channel: "cron"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// waiting returns the call's request once it waits in the console's queue.
func waiting(t *testing.T, console *store.Store, callID string) store.PendingApproval {
	t.Helper()
	return waitingFor(t, console, func(p store.PendingApproval) bool { return p.CallID == callID })
}

// waitingFor returns the first request in the console's queue that is.
func waitingFor(t *testing.T, console *store.Store, is func(store.PendingApproval) bool) store.PendingApproval {
	t.Helper()
	for {
		list, err := console.Pending().List(context.Background(), store.PendingFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if is(p) {
				return p
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// beat makes the console live.
func beat(t *testing.T, console *store.Store) {
	t.Helper()
	if err := console.Pending().Beat(context.Background(), "http://127.0.0.1:7777/"); err != nil {
		t.Fatal(err)
	}
}

// TestCallsWaitForTheConsole: with no console open a call that needs
// approval is blocked at once, saying how to get one; with one open it
// waits, and the console's decision — made through another store, as the
// console's process makes it — holds as the terminal's would: once, for
// the session (not another), for the workspace (kept in the store); a
// denial's reason reaches the model; the audit says who decided.
func TestCallsWaitForTheConsole(t *testing.T) {
	t.Parallel()
	tb, console, ws := openWaiting(t, "console:\n  approvalTimeout: 1m\n", toolbelt.Options{})
	r, ctx := runner(t, tb), context.Background()
	if got := ping(ctx, r, "c0", "s1"); !strings.Contains(got, toolbelt.NoConsole) {
		t.Fatalf("without a console: %s", got)
	}
	beat(t, console)
	// decide runs the call in session and has the console decide it.
	decide := func(id, session string, d store.PendingDecision) string {
		t.Helper()
		done := make(chan string)
		go func() { done <- ping(ctx, r, id, session) }()
		p := waiting(t, console, id)
		if p.Tool != "ping" || strings.Contains(string(p.Args), "0123456789abcdef") || p.Caller.SessionKey != session || p.Workspace != tool.ResolveDir(ws) || p.Always == "" {
			t.Errorf("pending: %+v (args %s)", p, p.Args)
		}
		if err := console.Pending().Decide(ctx, p.ID, d); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	if got := decide("c1", "s1", store.PendingDecision{Allow: true, Grant: store.GrantSession, By: "console (ada)"}); !strings.Contains(got, "pong") {
		t.Fatalf("allowed for the session: %s", got)
	}
	if got := ping(ctx, r, "c2", "s1"); !strings.Contains(got, "pong") {
		t.Fatalf("again in the session: %s", got)
	}
	if got := decide("c3", "s2", store.PendingDecision{Reason: "not in this session", By: "console (ada)"}); !strings.Contains(got, "The user denied this call: not in this session") {
		t.Fatalf("denied in another session: %s", got)
	}
	if got := decide("c4", "s3", store.PendingDecision{Allow: true, Grant: store.GrantWorkspace, By: "console (bob)"}); !strings.Contains(got, "pong") {
		t.Fatalf("allowed for the workspace: %s", got)
	}
	if got := ping(ctx, r, "c5", "s4"); !strings.Contains(got, "pong") {
		t.Fatalf("again in the workspace: %s", got)
	}
	if list, err := tb.Store().Approvals(ws).List(ctx); err != nil || len(list) != 1 || list[0].By != "console (bob)" {
		t.Fatalf("kept for the workspace: %+v %v", list, err)
	}
	// Closing moves what the audit spool holds into the log.
	if err := tb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rs, err := auditlog.New(console).List(ctx, auditlog.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for _, r := range rs {
		if c := r.Confirmation; c != nil {
			answers[r.CallID] = c.Answer + " by " + c.By
		}
	}
	for id, want := range map[string]string{"c1": "allow-session by console (ada)", "c3": "deny by console (ada)", "c4": "allow-workspace by console (bob)"} {
		if answers[id] != want {
			t.Errorf("audit of %s: %q, want %q", id, answers[id], want)
		}
	}
}

// TestConsoleApprovalTimesOut: a call nobody decides in
// console.approvalTimeout is denied, saying so, even when that is longer
// than confirm.timeout; a call whose context ends while it waits leaves
// its request cancelled.
func TestConsoleApprovalTimesOut(t *testing.T) {
	t.Parallel()
	tb, console, _ := openWaiting(t, "console:\n  approvalTimeout: 2s\nconfirm:\n  timeout: 1s\n", toolbelt.Options{})
	r := runner(t, tb)
	beat(t, console)
	if got := ping(context.Background(), r, "late", "s1"); !strings.Contains(got, "No one approved this call in the console within 2s, so it was not run.") {
		t.Fatalf("nobody decided: %s", got)
	}
	if p := waiting(t, console, "late"); p.State != store.PendingExpired {
		t.Errorf("the request of a call nobody decided is %s", p.State)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string)
	go func() { done <- ping(ctx, r, "gone", "s1") }()
	waiting(t, console, "gone")
	cancel()
	if got := <-done; !strings.Contains(got, "cancelled while waiting for approval") {
		t.Fatalf("cancelled: %s", got)
	}
	if p := waiting(t, console, "gone"); p.State != store.PendingCancelled {
		t.Errorf("the request of a cancelled call is %s", p.State)
	}
}

// TestMCPClientsWithoutElicitationWaitForTheConsole: a real MCP client
// that cannot ask its user gets the console's decision.
func TestMCPClientsWithoutElicitationWaitForTheConsole(t *testing.T) {
	t.Parallel()
	tb, console, _ := openWaiting(t, "", toolbelt.Options{})
	beat(t, console)
	srv, err := tb.MCPServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.Handler(mcp.HTTPOptions{}))
	t.Cleanup(ts.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for _, d := range []store.PendingDecision{{Allow: true, By: "console (ada)"}, {Reason: "no pings today", By: "console (ada)"}} {
		done := make(chan *sdk.CallToolResult)
		go func() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ping", Arguments: map[string]any{"token": "x"}})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		var p store.PendingApproval
		for p.ID == "" {
			select {
			case res := <-done:
				t.Fatalf("the call did not wait: %+v", res.Content[0])
			default:
			}
			list, err := console.Pending().List(context.Background(), store.PendingFilter{State: store.PendingWaiting})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) > 0 {
				p = list[0]
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := console.Pending().Decide(context.Background(), p.ID, d); err != nil {
			t.Fatal(err)
		}
		res := <-done
		text := res.Content[0].(*sdk.TextContent).Text
		if d.Allow && text != "pong" || !d.Allow && !strings.Contains(text, "The user denied this call: no pings today") {
			t.Fatalf("decided %+v: %s", d, text)
		}
	}
}
