package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestToolsListIsTheSDKs: every page of a tools/list answer (the SDK's,
// with the tools in place of their stand-ins, listTheSchemas) is byte for
// byte the page the SDK writes for the same tools given to it as they are
// — read by a real client session over in-memory pipes, streamable HTTP
// and stdio — for tools with output schemas, annotations, titles, and
// descriptions holding HTML characters, non-ASCII, U+2028, quotes and
// backslashes; and it still is after tools changed in place (description,
// title, output schema, annotations), were removed and added, so an answer
// never repeats a tool as it was before its change.
func TestToolsListIsTheSDKs(t *testing.T) {
	t.Parallel()
	texts := []string{
		"Plain words.",
		`<b>bold</b> & "quoted" \ back\slash`,
		"café — naïve ✓ 日本語 🙂",
		"a line\u2028and\u2029a paragraph",
		"tab\tbell\u0007 <script>&amp;",
		"",
	}
	schemas := corpusInputSchemas(t)
	schemas = append(schemas,
		json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}}}`),
		json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"a line\u2028and <b> & \"quotes\" \\ \u0007"}}}`),
		json.RawMessage(`{"type":"object"}`),
	)
	output := func(text string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Description: text, Properties: map[string]*jsonschema.Schema{
			"answer": {Type: "string", Description: "<the answer> & ü"},
		}}
	}
	ok := func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
		return tool.Text("ok"), nil
	}
	params := make([]*jsonschema.Schema, len(schemas))
	for i, raw := range schemas {
		params[i] = new(jsonschema.Schema)
		if err := json.Unmarshal(raw, params[i]); err != nil {
			t.Fatal(err)
		}
	}
	toolN := func(i int) tool.Tool {
		tl := tool.Tool{
			Name:        fmt.Sprintf("tool_%04d", i),
			Description: fmt.Sprintf("Tool %d. %s", i, texts[i%len(texts)]),
			Parameters:  params[i%len(params)],
			Meta:        tool.Meta{Destructive: i%2 == 0, OpenWorld: i%4 != 0, ReadOnly: i%3 == 0, Idempotent: i%5 == 1},
			Execute:     ok,
		}
		if i%5 == 0 {
			tl.Label = "Tool «" + texts[i%len(texts)] + "»"
		}
		if i%7 == 0 {
			tl.Output = output(texts[i%len(texts)])
		}
		return tl
	}
	reg := registry.New()
	const n = 2100 // three pages of the SDK's 1,000
	for i := range n {
		if err := reg.Register(toolN(i)); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(sdkChecks bool) *Server {
		srv := newServer(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, Options{Logger: slog.New(slog.DiscardHandler)}, sdkChecks)
		t.Cleanup(srv.Close)
		return srv
	}
	ours := serve(false)
	// Each transport connects a client to a server; the SDK's answers are
	// read over the same transport as ours (the protocol version a client
	// settles on, and so the members of an answer, may differ by
	// transport).
	transports := map[string]func(*Server) sdk.Transport{
		"in-memory": func(srv *Server) sdk.Transport {
			st, ct := sdk.NewInMemoryTransports()
			if _, err := srv.SDK().Connect(context.Background(), st, nil); err != nil {
				t.Fatal(err)
			}
			return ct
		},
		"http": func(srv *Server) sdk.Transport {
			hs := httptest.NewServer(srv.Handler(HTTPOptions{}))
			t.Cleanup(hs.Close)
			return &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}
		},
		"stdio": func(srv *Server) sdk.Transport {
			in, out := stdioPipes(t, srv)
			return &sdk.IOTransport{Reader: out, Writer: in}
		},
	}
	// The SDK's answers come from a server made for the tools as they are
	// now, which never saw them otherwise.
	compare := func(when string) {
		t.Helper()
		sdks := serve(true)
		for name, transport := range transports {
			want, got := listPages(t, transport(sdks)), listPages(t, transport(ours))
			if len(want) != 3 {
				t.Fatalf("%s, %s: the SDK's answer has %d pages, want 3", when, name, len(want))
			}
			if len(got) != len(want) {
				t.Errorf("%s, %s: %d pages, the SDK's %d", when, name, len(got), len(want))
				continue
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s, %s: page %d differs from the SDK's:\n%s", when, name, i, firstDifference(got[i], want[i]))
				}
			}
		}
	}
	compare("as registered")

	// Changes after the first answers: each changed tool is registered
	// anew with the same parameters (the same schema value), so only what
	// changed is new, in a batch, so that the servers see the tool
	// changed, not removed and added.
	change := func(i int, edit func(*tool.Tool)) {
		tl := toolN(i)
		edit(&tl)
		end := reg.Batch()
		defer end()
		reg.Unregister(tl.Name)
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	change(1, func(tl *tool.Tool) { tl.Description = `Changed: <now> & "then" \ ü` + "\u2028" })
	change(1001, func(tl *tool.Tool) { tl.Label = "A new title & more" })
	change(2002, func(tl *tool.Tool) { tl.Output = output("a new output schema <x>") })
	change(14, func(tl *tool.Tool) { tl.Output = nil })
	change(3, func(tl *tool.Tool) { tl.Meta.ReadOnly, tl.Meta.Destructive = false, true })
	reg.Unregister("tool_0500")
	reg.Unregister("tool_1500")
	if err := reg.Register(tool.Tool{Name: "tool_0500b", Description: "Added <later>.", Parameters: params[0], Execute: ok}); err != nil {
		t.Fatal(err)
	}
	compare("after changes")
}

// listPages connects a client over transport and returns every page of
// its tools/list answer, each result as the client read it off the wire.
func listPages(t *testing.T, transport sdk.Transport) []string {
	t.Helper()
	ctx := context.Background()
	rec := &recording{Transport: transport}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	rec.reset()
	cursor := ""
	var pages []string
	for {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		results := rec.reset()
		if len(results) != 1 {
			t.Fatalf("%d results read for one tools/list", len(results))
		}
		pages = append(pages, string(results[0]))
		if cursor = res.NextCursor; cursor == "" || len(pages) > 5 {
			return pages
		}
	}
}

// recording is a client transport that keeps the results it reads.
type recording struct {
	sdk.Transport
	mu      sync.Mutex
	results []json.RawMessage
}

func (r *recording) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, r: r}, nil
}

// reset returns the results read since the last reset.
func (r *recording) reset() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.results
	r.results = nil
	return out
}

type recordingConn struct {
	sdk.Connection
	r *recording
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if res, ok := msg.(*jsonrpc.Response); ok && res.Error == nil {
		c.r.mu.Lock()
		c.r.results = append(c.r.results, append(json.RawMessage(nil), res.Result...))
		c.r.mu.Unlock()
	}
	return msg, err
}

// firstDifference shows where got first differs from want.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-200, 0)
	return fmt.Sprintf("at byte %d of %d (want %d):\n%s\nwant\n%s", i, len(got), len(want), got[from:min(i+300, len(got))], want[from:min(i+300, len(want))])
}
