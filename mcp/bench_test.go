package mcp_test

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
)

// BenchmarkReadRoundTrip measures a read of a 4 KB file from an MCP client
// over in-memory transports, with the audit log and outputs in SQLite as the
// CLI sets them up, and without any state.
func BenchmarkReadRoundTrip(b *testing.B) {
	for _, withState := range []bool{false, true} {
		name := "no-state"
		if withState {
			name = "sqlite-state"
		}
		b.Run(name, func(b *testing.B) {
			reg, tc := benchWorkspace(b)
			var opts []invoke.Option
			if withState {
				st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "toolbelt.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				tc.Journal = st.Journal(store.JournalOptions{})
				opts = append(opts, invoke.WithAudit(auditlog.New(st)), invoke.WithOutputs(st.Outputs(store.OutputOptions{})))
			}
			srv := mcp.New(reg, tc, mcp.Options{Logger: quietLog}, opts...)
			defer srv.Close()
			ctx := context.Background()
			st, ct := sdk.NewInMemoryTransports()
			ss, err := srv.SDK().Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { cs.Close(); _ = ss.Wait() }()
			params := &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "file.txt"}}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// benchWorkspace is a workspace holding file.txt (4 KB, 64 lines), the
// core tools and the tool context of a server over it.
func benchWorkspace(b *testing.B) (*registry.Registry, *tool.Context) {
	ws := b.TempDir()
	line := strings.Repeat("x", 63) + "\n"
	if err := os.WriteFile(filepath.Join(ws, "file.txt"), []byte(strings.Repeat(line, 64)), 0o644); err != nil {
		b.Fatal(err)
	}
	reg, closer := tools.Core()
	b.Cleanup(func() { closer.Close() })
	bridge, err := fsbridge.OpenLocal(ws)
	if err != nil {
		b.Fatal(err)
	}
	return reg, &tool.Context{Identity: tool.Identity{Workspace: ws, Owner: true}, FSRoot: ws, FS: bridge}
}

// BenchmarkHTTPSessionMemory measures the memory an open streamable HTTP
// session holds in the server: the live heap and goroutine stacks after
// 100 sessions are opened (initialize, initialized, one read call each),
// per session, for Toolbelt's handler and for the SDK's own handler in
// front of a server with one tool (the floor's). The client is raw HTTP
// in the same process and keeps only the session ids.
func BenchmarkHTTPSessionMemory(b *testing.B) {
	reg, tc := benchWorkspace(b)
	ws := tc.Workspace
	tb := mcp.New(reg, tc, mcp.Options{Logger: quietLog})
	defer tb.Close()
	bare := sdk.NewServer(&sdk.Implementation{Name: "floor", Version: "1"}, nil)
	type readArgs struct {
		Path string `json:"path"`
	}
	sdk.AddTool(bare, &sdk.Tool{Name: "read"}, func(_ context.Context, _ *sdk.CallToolRequest, in readArgs) (*sdk.CallToolResult, any, error) {
		data, err := os.ReadFile(filepath.Join(ws, filepath.Clean(in.Path)))
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}, nil, nil
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"toolbelt", tb.Handler(mcp.HTTPOptions{Addr: "127.0.0.1:0"})},
		{"sdk", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return bare }, nil)},
	} {
		b.Run(c.name, func(b *testing.B) {
			ts := httptest.NewServer(c.h)
			defer ts.Close()
			const sessions = 100
			var perSession float64
			for b.Loop() {
				before := inUse()
				ids := make([]string, 0, sessions)
				for range sessions {
					id := rawPost(b, ts.URL, "", initBody)
					rawPost(b, ts.URL, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
					rawPost(b, ts.URL, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"file.txt"}}}`)
					ids = append(ids, id)
				}
				perSession = float64(inUse()-before) / sessions
				for _, id := range ids {
					req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
					req.Header.Set("Mcp-Session-Id", id)
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}
			b.ReportMetric(perSession, "B/session")
		})
	}
}

// inUse is the live heap and the goroutine stacks, after a collection.
func inUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc + ms.StackInuse)
}

// rawPost posts an MCP message in a session (or opening one) and returns
// the session id the server answered with.
func rawPost(b testing.TB, url, session, body string) string {
	b.Helper()
	resp, out := postJSON(b, url, session, "", body)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s: %d %s", body, resp.StatusCode, out)
	}
	return cmp.Or(resp.Header.Get("Mcp-Session-Id"), session)
}
