package toolbelt_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/tool"
)

// TestApprovalScopesOverMCP: over MCP, with a real client answering the
// approval form, "allow for this session" holds in that client session
// only — a new session of the same server asks again — and "allow in this
// workspace" holds in a new server (a new root on the same store, as a new
// process is) and is listed with who gave it.
func TestApprovalScopesOverMCP(t *testing.T) {
	t.Parallel()
	ping := tool.Must(tool.New("ping", "Pings.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text("pong"), nil
	}))
	ping.Meta = tool.Meta{RequiresConfirmation: true}
	ws, data := t.TempDir(), t.TempDir()
	server := func() *toolbelt.Toolbelt {
		t.Helper()
		cfg, err := config.Parse("toolbelt.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: data, Tools: []tool.Tool{ping}})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	var asked atomic.Int32
	// client connects to tb's MCP server over HTTP as a new session whose
	// user answers decision.
	client := func(tb *toolbelt.Toolbelt, decision string) *sdk.ClientSession {
		t.Helper()
		srv, err := tb.MCPServer()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		ts := httptest.NewServer(srv.Handler(mcp.HTTPOptions{}))
		t.Cleanup(ts.Close)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "scopes", Version: "1"}, &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked.Add(1)
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
			},
		}).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// ping calls ping in cs and returns how many questions it took.
	ping2 := func(cs *sdk.ClientSession) int32 {
		t.Helper()
		before := asked.Load()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ping", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*sdk.TextContent).Text != "pong" {
			t.Fatalf("ping: %v %+v", err, res)
		}
		return asked.Load() - before
	}

	first := server()
	session := client(first, "allow for this session")
	if n, again := ping2(session), ping2(session); n != 1 || again != 0 {
		t.Fatalf("allowed for the session: asked %d, then %d times", n, again)
	}
	other := client(first, "allow in this workspace")
	if n := ping2(other); n != 1 {
		t.Fatalf("the session's answer held in another session (asked %d times)", n)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	second := server()
	t.Cleanup(func() { second.Close(context.Background()) })
	if n := ping2(client(second, "deny")); n != 0 {
		t.Fatalf("the workspace's answer did not hold in a new server (asked %d times)", n)
	}
	list, err := second.Store().Approvals(ws).List(context.Background())
	if err != nil || len(list) != 1 || list[0].Tool != "ping" || list[0].By != "mcp client scopes" || list[0].At.IsZero() {
		t.Fatalf("listed: %v %+v", err, list)
	}
}
