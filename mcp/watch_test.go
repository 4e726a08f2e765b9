package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/fs"
)

// TestSubscribeOwnResources: a client subscribed to a workspace file or a
// configured file resource is told when the file changes; a configured
// text can be subscribed to; a URI the server does not serve, or a file
// the policy does not let the client read, cannot.
func TestSubscribeOwnResources(t *testing.T) {
	t.Parallel()
	ws, dir := t.TempDir(), t.TempDir()
	write := func(file, body string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ws, "notes.txt"), "v1")
	write(filepath.Join(ws, "secret.txt"), "v1")
	write(filepath.Join(dir, "watched.txt"), "v1")
	b, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	reg := registry.New()
	if err := fs.Register(reg); err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws, Owner: true}, FSRoot: ws, FS: b}
	p := &policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{{Tools: []string{"read"}, When: map[string][]string{"path": {"secret*"}}}}}}
	srv := mcp.New(reg, tc, mcp.Options{Logger: quietLog, Resources: []mcp.Resource{
		{URI: "test://watched", File: filepath.Join(dir, "watched.txt")},
		{URI: "test://fixed", Text: "never changes"},
	}}, invoke.WithPolicy(p))
	t.Cleanup(srv.Close)
	updated := make(chan string, 10)
	cs := connectTo(t, srv, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // resources/subscribe's version
	ctx := context.Background()
	for _, uri := range []string{"workspace:///notes.txt", "test://watched", "test://fixed"} {
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	for _, tc := range []struct{ uri, err string }{
		{"test://elsewhere", "none of this server's resources"},
		{"workspace:///secret.txt", "refused"},
	} {
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: tc.uri}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("subscribe %s: err = %v, want %q", tc.uri, err, tc.err)
		}
	}
	await := func(want string) {
		t.Helper()
		for {
			select {
			case uri := <-updated:
				if uri == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no notifications/resources/updated for %s", want)
			}
		}
	}
	write(filepath.Join(ws, "notes.txt"), "v2")
	await("workspace:///notes.txt")
	write(filepath.Join(dir, "watched.txt"), "v2")
	await("test://watched")
	// Unsubscribed, then subscribed again: the file is watched again.
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "test://watched"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://watched"}); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "watched.txt"), "v3")
	await("test://watched")
}
