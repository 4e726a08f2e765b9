package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// TestStandInsListAsTheTools: the tools added to the SDK with a stand-in
// schema (checkedAs) are listed byte for byte as the SDK lists them when
// given their own schemas — every answer of a paginated tools/list, for
// every dialect and protocol version — and both kinds of tool are in the
// list: plain schemas (stood in) and ones naming x-mcp-header or escaping
// a character (given to the SDK as they are).
func TestStandInsListAsTheTools(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	schemas := corpusInputSchemas(t)
	schemas = append(schemas,
		json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}}}`),
		json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"a line\u2028and <b> & \"quotes\" \u0007"}}}`),
		json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"<tags> & \"quotes\""}}}`),
		json.RawMessage(`{"type":"object"}`),
		json.RawMessage(`{}`),
	)
	// More than a page of the SDK's (1,000 tools).
	for i := 0; i < 1100; i++ {
		var params jsonschema.Schema
		if err := json.Unmarshal(schemas[i%len(schemas)], &params); err != nil {
			t.Fatal(err)
		}
		tl := tool.Tool{
			Name:        fmt.Sprintf("tool_%04d", i),
			Description: fmt.Sprintf("Tool %d, <imported> & \"quoted\".", i),
			Parameters:  &params,
			Meta:        tool.Meta{Destructive: i%2 == 0, OpenWorld: true, ReadOnly: i%3 == 0},
			Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
				return tool.Text("ok"), nil
			},
		}
		if i%5 == 0 {
			tl.Label = "Tool number " + fmt.Sprint(i)
		}
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	newProtocol := fmt.Sprintf(`{%q:"2026-07-28",%q:{"name":"t","version":"1"},%q:{}}`, sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientInfo, sdk.MetaKeyClientCapabilities)
	versions := map[string]string{"2025-06-18": "", "2025-11-25": "", "2026-07-28": `"_meta":` + newProtocol}
	for _, d := range schema.Dialects() {
		serve := func(sdkChecks bool) *Server {
			srv := newServer(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, Options{Logger: slog.New(slog.DiscardHandler), Dialect: d}, sdkChecks)
			t.Cleanup(srv.Close)
			return srv
		}
		own, standing := serve(true), serve(false)
		plain, standIns := 0, 0
		for _, l := range standing.listed {
			if _, ok := listed(checkedAs(&sdk.Tool{InputSchema: l.schema})); ok {
				standIns++
			} else {
				plain++
			}
		}
		if standIns == 0 || plain == 0 {
			t.Errorf("%s: %d tools stood in, %d not: both kinds must be listed", d.Name(), standIns, plain)
		}
		for version, meta := range versions {
			want, got := rawAnswers(t, own, version, meta), rawAnswers(t, standing, version, meta)
			if len(want) < 2 {
				t.Fatalf("%s %s: %d pages, want 2", d.Name(), version, len(want))
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d pages, the SDK's own %d", d.Name(), version, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s %s: page %d differs from the SDK's own:\n%.2000s\nwant\n%.2000s", d.Name(), version, i, got[i], want[i])
				}
			}
		}
	}
}

// rawAnswers returns every page of srv's tools/list, each result as the
// SDK wrote it, following the cursors; meta is the requests' _meta member.
func rawAnswers(t *testing.T, srv *Server, version, meta string) []string {
	t.Helper()
	// An answer the SDK cannot encode is never sent: the deadline ends
	// the wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id := int64(0)
	call := func(method, params string) json.RawMessage {
		t.Helper()
		req := &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}
		if method != "notifications/initialized" {
			id++
			req.ID, _ = jsonrpc.MakeID(float64(id))
		}
		if err := conn.Write(ctx, req); err != nil {
			t.Fatal(err)
		}
		if !req.ID.IsValid() {
			return nil
		}
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if resp, ok := msg.(*jsonrpc.Response); ok {
				if resp.Error != nil {
					t.Fatalf("%s: %v", method, resp.Error)
				}
				return resp.Result
			}
		}
	}
	call("initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	call("notifications/initialized", `{}`)
	var pages []string
	cursor := ""
	for {
		params := "{" + meta
		if cursor != "" {
			if meta != "" {
				params += ","
			}
			params += `"cursor":` + cursor
		}
		res := call("tools/list", params+"}")
		pages = append(pages, string(res))
		var next struct {
			Cursor json.RawMessage `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &next); err != nil {
			t.Fatal(err)
		}
		if len(next.Cursor) == 0 || len(pages) > 5 {
			return pages
		}
		cursor = string(next.Cursor)
	}
}

// TestCheckedAs: a tool whose schema's JSON may hold an x-mcp-header
// annotation is given to the SDK as it is, for the SDK to check; any other
// is stood in by a schema of type "object" that leads back to the tool and
// cannot be encoded, and the SDK adds it.
func TestCheckedAs(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	for _, tc := range []struct {
		schema   any
		standsIn bool
	}{
		{json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"<b> & \"x\""}}}`), true},
		{json.RawMessage(`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`), false},
		{json.RawMessage(`{"type":"object","properties":{"r":{"type":"string","x-mcp-heade\u0072":"Region"}}}`), false},
		{json.RawMessage(`{"type":"object","description":"line\u2028break"}`), false},
		{map[string]any{"type": "object"}, false},
	} {
		in := &sdk.Tool{Name: "t", InputSchema: tc.schema}
		out := checkedAs(in)
		l, ok := listed(out)
		if ok != tc.standsIn {
			t.Errorf("%s: stood in %v, want %v", tc.schema, ok, tc.standsIn)
			continue
		}
		if !ok {
			if out != in {
				t.Errorf("%s: not the tool itself", tc.schema)
			}
			continue
		}
		if l != in || out.Name != in.Name {
			t.Errorf("%s: the stand-in does not lead back to the tool", tc.schema)
		}
		if b, err := json.Marshal(out.InputSchema); err == nil {
			t.Errorf("a stand-in encodes, as %s", b)
		}
		srv.AddTool(out, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	}
}

// TestSameMetaIsEqualJSON: sameMeta says two tools' metadata are the same
// exactly when their JSON is: equal values without encoding them, values
// that differ only where the JSON does not look (Summary) too, and values
// whose JSON differs not.
func TestSameMetaIsEqualJSON(t *testing.T) {
	a := tool.Meta{ID: "x", Label: "X", Groups: []string{"g"}, ParamAliases: map[string]string{"file_path": "path"}, Timeout: time.Second}
	b := a
	b.Groups = []string{"g"} // equal, not the same slice
	if !sameMeta(a, b) {
		t.Error("equal metadata are not the same")
	}
	b.Summary = "other" // not in the JSON
	if !sameMeta(a, b) {
		t.Error("metadata that differ only in Summary are not the same")
	}
	for _, change := range []func(*tool.Meta){
		func(m *tool.Meta) { m.Label = "Y" },
		func(m *tool.Meta) { m.Groups = []string{"h"} },
		func(m *tool.Meta) { m.ParamAliases = nil },
		func(m *tool.Meta) { m.Timeout = 2 * time.Second },
		func(m *tool.Meta) { m.ReadOnly = true },
	} {
		c := a
		change(&c)
		if sameMeta(a, c) {
			t.Errorf("changed metadata %+v is the same as %+v", c, a)
		}
	}
}
