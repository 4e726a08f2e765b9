package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestWireMatchesTheSDK holds the stdio connection's own encoding to the
// SDK's: a response encodeResponse writes is the line
// jsonrpc.EncodeMessage writes.
func TestWireMatchesTheSDK(t *testing.T) {
	ids := []any{float64(1), float64(-7), float64(123456789012345), "req-1", "a<b>&c", "ü", "tab\t", `q"`}
	results := []sdk.Result{
		&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat(strings.Repeat("x", 63)+"\n", 64)}}},
		&sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "<b>\"quoted\" & \\ é \u2028 \x01</b>"}}},
		&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte{0, 1, 2}, MIMEType: "image/png"}}, StructuredContent: json.RawMessage(`{"a":1}`)},
		&sdk.ListToolsResult{Tools: []*sdk.Tool{{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
	}
	fast := 0
	for _, rawID := range ids {
		id, err := jsonrpc.MakeID(rawID)
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range results {
			// The SDK encodes results this way (jsonrpc2.marshalToRaw).
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(res); err != nil {
				t.Fatal(err)
			}
			r := &jsonrpc.Response{ID: id, Result: bytes.TrimRight(b.Bytes(), "\n")}
			want, err := jsonrpc.EncodeMessage(r)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := encodeResponse(r)
			if !ok {
				continue
			}
			fast++
			if string(got) != string(want)+"\n" {
				t.Errorf("encodeResponse(id %v) =\n%s\nthe SDK writes\n%s", rawID, got, want)
			}
		}
	}
	if fast < 5*len(results) {
		t.Errorf("encodeResponse took %d of %d responses; want at least the integer and plain string ids", fast, len(ids)*len(results))
	}
	for _, r := range []*jsonrpc.Response{
		{ID: mustID(t, float64(1)), Error: &jsonrpc.Error{Code: -32602, Message: "bad"}},
		{ID: mustID(t, float64(1))},
		{ID: mustID(t, float64(1)), Result: json.RawMessage("{\n}")},
	} {
		if got, ok := encodeResponse(r); ok {
			t.Errorf("encodeResponse(%+v) took it: %s", r, got)
		}
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// callResults are results as the server builds them, and odd ones.
func callResults() []*sdk.CallToolResult {
	tricky := "<b>\"quoted\" & \\ é \u2028 \u2029 \x01 \x7f\t\n</b> \xff invalid"
	return []*sdk.CallToolResult{
		{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat(strings.Repeat("x", 63)+"\n", 64)}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: tricky}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: ""}}},
		{Content: []sdk.Content{}},
		{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: `{"status":"error","tool":"x","error":"no"}`}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a picture"}, &sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}, StructuredContent: json.RawMessage(`{"path":"a <b>","n":1}`)},
		{Content: []sdk.Content{&sdk.TextContent{Text: "with meta", Meta: sdk.Meta{"k": "v"}}}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "annotated", Annotations: &sdk.Annotations{Priority: 0.5}}}},
		{Meta: sdk.Meta{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "toolbelt"}}, Content: []sdk.Content{&sdk.TextContent{Text: "result meta"}}},
		{InputRequests: sdk.InputRequestMap{"approval": &sdk.ElicitParams{Message: "ok?"}}, RequestState: "state"},
		{},
	}
}

// TestEncodeCallResultIsTheSDKs: a result wireResult writes is byte for
// byte the one the SDK writes.
func TestEncodeCallResultIsTheSDKs(t *testing.T) {
	for i, r := range callResults() {
		want, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeCallResult(r)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("result %d:\n%s\nthe SDK writes\n%s", i, got, want)
		}
		// And as the SDK writes it into a response.
		var a, b bytes.Buffer
		for _, x := range []struct {
			buf *bytes.Buffer
			v   any
		}{{&a, r}, {&b, &wireResult{res: r}}} {
			enc := json.NewEncoder(x.buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(x.v); err != nil {
				t.Fatal(err)
			}
		}
		if a.String() != b.String() {
			t.Errorf("result %d encoded by the SDK's encoder:\n%s\nwant\n%s", i, b.String(), a.String())
		}
	}
}

// TestCallResultWireIsTheSDKs runs the same calls over stdio with results
// encoded by wireResult and by the SDK, at each protocol version (the
// latest sets a result type; a sessionless request of the newest protocol
// gets the server's identity in its metadata): every line is the same.
func TestCallResultWireIsTheSDKs(t *testing.T) {
	reg := registry.New()
	results := callResults()
	shapes := map[string]tool.Result{
		"text":   tool.Text(results[1].Content[0].(*sdk.TextContent).Text),
		"page":   tool.Text(results[0].Content[0].(*sdk.TextContent).Text),
		"empty":  tool.Text(""),
		"image":  tool.Image("a picture", []byte{0x89, 'P', 'N', 'G', 0, 1}, "image/png"),
		"failed": {IsError: true, Content: []tool.Content{{Type: tool.TextContent, Text: "it <failed> & stopped"}}},
	}
	answer := tool.Must(tool.New("answer", "Answers in the shape asked for.", func(_ context.Context, in struct {
		Shape string `json:"shape"`
	}, _ tool.Invocation) (tool.Result, error) {
		return shapes[in.Shape], nil
	}))
	answer.Meta.ReadOnly = true
	if err := reg.Register(answer); err != nil {
		t.Fatal(err)
	}
	serve := func(sdkEncoding bool, input string) map[string]string {
		srv := New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, Options{Logger: slog.New(slog.DiscardHandler), ExposeDetails: true})
		defer srv.Close()
		srv.sdkEncoding = sdkEncoding
		var out syncbuf.Buffer
		if err := srv.ServeStdio(context.Background(), StdioOptions{In: strings.NewReader(input), Out: &out}); err != nil {
			t.Fatal(err)
		}
		lines := map[string]string{}
		for line := range strings.Lines(out.String()) {
			var probe struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(line), &probe); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			lines[string(probe.ID)] = line
		}
		return lines
	}
	newProtocol := fmt.Sprintf(`"_meta":{%q:"2026-07-28",%q:{"name":"t","version":"1"},%q:{}},`, sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientInfo, sdk.MetaKeyClientCapabilities)
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
		id := 2
		for shape := range shapes {
			for _, meta := range []string{"", newProtocol} {
				input += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":"answer","arguments":{"shape":%q}}}`+"\n", id, meta, shape)
				id++
			}
		}
		input += fmt.Sprintf(`{"jsonrpc":"2.0","id":"s-%d","method":"tools/call","params":{"name":"ANSWER","arguments":{"shape":"text"}}}`+"\n", id)
		input += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nosuchtool","arguments":{}}}`+"\n", id+1)
		want, got := serve(true, input), serve(false, input)
		if len(want) != id+1 {
			t.Fatalf("version %s: %d answers, want %d", version, len(want), id+1)
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("version %s, id %s:\n%s\nthe SDK writes\n%s", version, k, got[k], w)
			}
		}
	}
}
