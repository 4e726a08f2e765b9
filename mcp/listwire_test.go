package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// TestListedSchemaIsTheCompiledJSON reads tools/list off the wire: each
// tool's inputSchema is, byte for byte, its schema compiled for the dialect
// and encoded as the SDK encodes its messages (<, > and & not escaped). The
// server hands the SDK these bytes rather than the map.
func TestListedSchemaIsTheCompiledJSON(t *testing.T) {
	t.Parallel()
	type args struct {
		Query string `json:"query" jsonschema:"Text to find, e.g. <b> & \"x\"" minLength:"1"`
		Limit int    `json:"limit,omitempty" minimum:"1" maximum:"50"`
	}
	find := tool.Must(tool.New("find", "Finds <things> & more.", func(context.Context, args, tool.Invocation) (tool.Result, error) {
		return tool.Text("ok"), nil
	}))
	reg := registry.New()
	if err := reg.Register(find); err != nil {
		t.Fatal(err)
	}
	listed := rawList(t, reg, schema.Gemini)
	doc, err := schema.FromSchema(find.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	compiled, _ := schema.Gemini.Compile(doc)
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(compiled); err != nil {
		t.Fatal(err)
	}
	got, ok := listed["find"]
	if len(listed) != 1 || !ok {
		t.Fatalf("tools/list: %v", listed)
	}
	if !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
		t.Errorf("inputSchema on the wire\n%s\nwant\n%s", got, want.Bytes())
	}
	if !bytes.Contains(got, []byte(`<b> & \"x\"`)) {
		t.Errorf("inputSchema escapes the description: %s", got)
	}
}

// rawList serves reg and returns each tool's inputSchema as tools/list
// writes it, read from the wire with a raw JSON-RPC connection.
func rawList(t *testing.T, reg *registry.Registry, dialect schema.Dialect) map[string]json.RawMessage {
	t.Helper()
	srv := mcp.New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog, Dialect: dialect}, invoke.WithPolicy(nil))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
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
	call := func(id int64, method string, params any) json.RawMessage {
		t.Helper()
		req := &jsonrpc.Request{Method: method}
		if params != nil {
			b, _ := json.Marshal(params)
			req.Params = b
		}
		if id != 0 {
			req.ID, _ = jsonrpc.MakeID(float64(id))
		}
		if err := conn.Write(ctx, req); err != nil {
			t.Fatal(err)
		}
		if id == 0 {
			return nil
		}
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.Error != nil {
			t.Fatalf("%s: %#v", method, msg)
		}
		return resp.Result
	}
	call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	call(0, "notifications/initialized", map[string]any{})
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(call(2, "tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, tl := range list.Tools {
		out[tl.Name] = tl.InputSchema
	}
	return out
}

// TestManyToolsListedAsCompiled: a list long enough to be compiled on
// several goroutines gives every tool its own schema, in place.
func TestManyToolsListedAsCompiled(t *testing.T) {
	t.Parallel()
	type args struct {
		Q string `json:"q" jsonschema:"x"`
	}
	reg := registry.New()
	want := map[string]string{}
	for i := range 150 {
		tl := tool.Must(tool.New(fmt.Sprintf("t%03d", i), "A tool.", func(context.Context, args, tool.Invocation) (tool.Result, error) {
			return tool.Text("ok"), nil
		}))
		tl.Parameters.Properties["q"].Description = fmt.Sprintf("query number %d", i)
		if i%3 == 0 {
			tl.Parameters.Properties["q"].Format = "uuid"
		}
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
		doc, err := schema.FromSchema(tl.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		compiled, _ := schema.OpenAIStrict.Compile(doc)
		b, err := schema.Encode(compiled)
		if err != nil {
			t.Fatal(err)
		}
		want[tl.Name] = string(b)
	}
	got := rawList(t, reg, schema.OpenAIStrict)
	if len(got) != len(want) {
		t.Fatalf("%d tools listed, want %d", len(got), len(want))
	}
	for name, w := range want {
		if string(got[name]) != w {
			t.Errorf("%s: inputSchema %s, want %s", name, got[name], w)
		}
	}
}
