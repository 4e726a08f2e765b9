package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
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
			ws := b.TempDir()
			line := strings.Repeat("x", 63) + "\n"
			if err := os.WriteFile(filepath.Join(ws, "file.txt"), []byte(strings.Repeat(line, 64)), 0o644); err != nil {
				b.Fatal(err)
			}
			reg, closer := tools.Core()
			defer closer.Close()
			bridge, err := fsbridge.OpenLocal(ws)
			if err != nil {
				b.Fatal(err)
			}
			tc := &tool.Context{WorkspaceDir: ws, FSRoot: ws, FS: bridge, Owner: true}
			var opts []invoke.Option
			if withState {
				st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "toolbelt.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				tc.Journal = st.Journal(store.JournalOptions{})
				opts = append(opts, invoke.WithAudit(audit.New(st)), invoke.WithOutputs(st.Outputs(store.OutputOptions{})))
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
