package main

import (
	"context"
	"log"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// mix are the calls makeCalls makes in turn: the file tools that read.
var mix = []sdk.CallToolParams{
	{Name: "read", Arguments: map[string]any{"path": "file.txt"}},
	{Name: "ls", Arguments: map[string]any{"path": "."}},
	{Name: "find", Arguments: map[string]any{"pattern": "*.txt"}},
	{Name: "grep", Arguments: map[string]any{"pattern": "x{8}", "context": 1}},
}

// connect opens a Go SDK client session with the MCP endpoint.
func connect(ctx context.Context, endpoint string) *sdk.ClientSession {
	c := sdk.NewClient(&sdk.Implementation{Name: "console-bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	harness.Check(err)
	return cs
}

// makeCalls makes n calls of the mix through the MCP endpoint, one client,
// one after another.
func makeCalls(ctx context.Context, endpoint string, n int) {
	cs := connect(ctx, endpoint)
	defer cs.Close()
	for i := range n {
		call(ctx, cs, &mix[i%len(mix)])
	}
}

// call makes one call and ends the benchmark if it failed.
func call(ctx context.Context, cs *sdk.ClientSession, p *sdk.CallToolParams) {
	res, err := cs.CallTool(ctx, p)
	harness.Check(err)
	if res.IsError {
		log.Fatalf("%s failed: %+v", p.Name, res.Content)
	}
}

// waitForRows waits until the calls page lists n calls: the server moves
// a call's audit record from its spool into the log shortly after the
// call.
func waitForRows(base string, n int) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, _ := fetch(base + "/calls")
		got := strings.Count(string(body), `<tr id="call-`)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			log.Fatalf("the calls page lists %d calls, not %d, 20 s after they were made", got, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// seed appends n calls to the audit log of the store of the server state
// directory to: the call records of the store of from, in turn, each with a new id, call id
// and time (the last one now, one every half second before it), through
// auditlog as the server appends them (redacted, hashed into the chain).
func seed(ctx context.Context, from, to string, n int) {
	records := func() []audit.Record {
		st := openStore(ctx, from)
		defer st.Close()
		all, err := auditlog.New(st).List(ctx, auditlog.Filter{})
		harness.Check(err)
		var calls []audit.Record
		for _, r := range all {
			if r.Kind == "" {
				calls = append(calls, r)
			}
		}
		return calls
	}()
	if len(records) == 0 {
		log.Fatalf("no call records in %s to copy", from)
	}
	st := openStore(ctx, to)
	defer st.Close()
	lg := auditlog.New(st)
	start := time.Now().Add(-time.Duration(n) * time.Second / 2)
	for i := range n {
		r := records[i%len(records)]
		prefix, _, _ := strings.Cut(r.CallID, "_")
		r.ID, r.Seq, r.Hash = "", 0, ""
		r.CallID = tool.NewCallID(prefix)
		r.Time = start.Add(time.Duration(i) * time.Second / 2)
		harness.Check(lg.Append(ctx, r))
	}
}

// openStore opens the SQLite store of a server's state directory (its
// data directory under it, harness.Env), as serve does.
func openStore(ctx context.Context, dir string) *store.Store {
	st, err := store.Open(ctx, filepath.Join(dir, "data", store.DefaultFile))
	harness.Check(err)
	return st
}
