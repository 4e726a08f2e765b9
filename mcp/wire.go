package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio connection encodes the common JSON-RPC responses of a call
// itself: the SDK's encoder scans the result, already compact JSON, once
// more to compact it, which for a 4 KB result is most of what a call costs
// beyond the tool. encodeResponse handles only the plain shapes and gives
// up (ok false) on anything else, which then takes the SDK's way;
// TestWireMatchesTheSDK holds it to the SDK's output. Messages are decoded
// by the SDK (jsonrpc.DecodeMessage): a decoder of our own for the plain
// requests moved no aim (stdio read p50 0.84–0.98× the bare go-sdk server
// with it, 0.91–1.04× without; docs/benchmarks.md), so it went.

// encodeResponse returns the line of a successful response — the bytes
// jsonrpc.EncodeMessage writes, and a newline — for an id that is an
// integer or a string of plain printable ASCII and a result the SDK
// encoded (compact JSON). ok is false for anything else.
func encodeResponse(r *jsonrpc.Response) ([]byte, bool) {
	if r.Error != nil || len(r.Result) == 0 || !r.ID.IsValid() || bytes.IndexByte(r.Result, '\n') >= 0 {
		return nil, false
	}
	out := make([]byte, 0, len(r.Result)+48)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	switch id := r.ID.Raw().(type) {
	case int64:
		out = strconv.AppendInt(out, id, 10)
	case string:
		for i := 0; i < len(id); i++ {
			if c := id[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return nil, false
			}
		}
		out = append(out, '"')
		out = append(out, id...)
		out = append(out, '"')
	default:
		return nil, false
	}
	out = append(out, `,"result":`...)
	out = append(out, r.Result...)
	out = append(out, "}\n"...)
	return out, true
}

// wireResult hands the SDK a tool result it encodes with fewer passes. The
// SDK encodes a *sdk.CallToolResult by encoding each content block to
// bytes, then the result around them — which the JSON encoder compacts,
// scanning every block's bytes again — and then compacts the whole result
// once more where it writes the response: a 4 KB text is scanned four
// times. wireResult writes the blocks into the result's bytes itself, so
// only the last compaction is left. The bytes are the SDK's own
// (TestCallResultWireIsTheSDKs); a result with metadata, or content the
// SDK would write as null, is encoded by the SDK.
type wireResult struct {
	sdk.ResultBase // the Result marker; the metadata is res's
	res            *sdk.CallToolResult
}

func (w *wireResult) GetMeta() map[string]any  { return w.res.GetMeta() }
func (w *wireResult) SetMeta(m map[string]any) { w.res.SetMeta(m) }

func (w *wireResult) MarshalJSON() ([]byte, error) { return encodeCallResult(w.res) }

// wrapResult returns a tools/call result for the SDK to encode.
func wrapResult(res sdk.Result, err error) (sdk.Result, error) {
	if r, ok := res.(*sdk.CallToolResult); ok && r != nil && err == nil {
		return &wireResult{res: r}, nil
	}
	return res, err
}

// contentHead is how the SDK starts a result without metadata.
const contentHead = `{"content":[`

// encodeCallResult returns what r.MarshalJSON returns, with text blocks
// written straight into the result's bytes.
func encodeCallResult(r *sdk.CallToolResult) ([]byte, error) {
	if len(r.Meta) != 0 || r.Content == nil {
		return r.MarshalJSON()
	}
	// The SDK writes everything but the blocks: IsError, structured
	// content, the result type it set (a copy keeps it), input requests.
	probe := *r
	probe.Content = []sdk.Content{}
	env, err := probe.MarshalJSON()
	if err != nil || !bytes.HasPrefix(env, []byte(contentHead+"]")) {
		return r.MarshalJSON()
	}
	size := len(env)
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			size += len(t.Text) + 32
		}
	}
	out := bytes.NewBuffer(make([]byte, 0, size))
	out.WriteString(contentHead)
	// As TextContent.MarshalJSON writes a text (json.Marshal: HTML
	// characters escaped), straight into out.
	enc := json.NewEncoder(out)
	for i, c := range r.Content {
		if i > 0 {
			out.WriteByte(',')
		}
		if t, ok := c.(*sdk.TextContent); ok && len(t.Meta) == 0 && t.Annotations == nil {
			out.WriteString(`{"type":"text","text":`)
			if err := enc.Encode(t.Text); err != nil {
				return r.MarshalJSON()
			}
			out.Truncate(out.Len() - 1) // Encode's newline
			out.WriteByte('}')
			continue
		}
		block, err := c.MarshalJSON()
		if err != nil {
			return r.MarshalJSON()
		}
		out.Write(block)
	}
	out.Write(env[len(contentHead):])
	return out.Bytes(), nil
}
