package mcp_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/tool"
)

// TestStaleSessionIsPrunedQuietly: a client that went away without ending
// its session (over HTTP, its stream is gone) is not warned about at every
// change of the tools: the first notification it cannot take marks it
// stale (one debug line), later changes skip it, and a live client is
// still told of each change.
func TestStaleSessionIsPrunedQuietly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := mcp.New(f.reg, &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: log}, invoke.WithLogger(quietLog))
	t.Cleanup(srv.Close)
	url := serveLimited(t, srv, mcp.HTTPOptions{}).URL

	// The stale client: initialized, then gone, its stream with it. It is
	// the first session, so the server tries it before the live one.
	resp, body := postJSON(t, url, "", "", initBody)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, body := postJSON(t, url, session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode >= 300 {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}

	var told atomic.Int32
	live, err := sdk.NewClient(&sdk.Implementation{Name: "live", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { told.Add(1) },
	}).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	change := func(i int32) {
		t.Helper()
		added := tool.Must(tool.New(fmt.Sprintf("added%d", i), "Added.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
			return tool.Text("ok"), nil
		}))
		if err := f.reg.Register(added); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("the live client is told of change %d", i+1), func() bool { return told.Load() == i+1 })
	}
	change(0)
	change(1)
	out := logs.String()
	if strings.Contains(out, "level=WARN") || strings.Contains(out, "level=ERROR") {
		t.Errorf("warnings about the stale session:\n%s", out)
	}
	if n := strings.Count(out, "no longer receives notifications"); n != 1 {
		t.Errorf("the stale session was noted %d times, not once:\n%s", n, out)
	}
	// A stale session that makes a request is tried again (and, still
	// without a stream, noted once more).
	if resp, body := postJSON(t, url, session, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}
	change(2)
	if out := logs.String(); strings.Count(out, "no longer receives notifications") != 2 || strings.Contains(out, "level=WARN") {
		t.Errorf("after a request, the session was not tried again, quietly:\n%s", out)
	}
}
