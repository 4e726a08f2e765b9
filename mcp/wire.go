package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio connection decodes and encodes the common JSON-RPC messages of
// a call itself. The SDK's decoder allocates a 32 KB buffer for every
// message (twice for a request: the message, then its method), and its
// encoder scans the result, already compact JSON, once more to compact it:
// for a 4 KB result that is most of what a call costs beyond the tool. Both
// functions here handle only the plain shapes and give up (ok false) on
// anything else, which then takes the SDK's way; TestWireMatchesTheSDK and
// FuzzDecodeRequest hold them to the SDK's output.

// maxFastDepth bounds the nesting decodeRequest accepts; the SDK refuses
// messages nested deeper than 1,000 levels, so deeper ones take its way to
// get its error.
const maxFastDepth = 512

// decodeRequest decodes a JSON-RPC request — keys jsonrpc ("2.0"), method,
// and optionally id (an integer of at most 15 digits, or a string) and
// params — from a line that is valid JSON. It returns ok false for any
// other message: a response, another key, a key written twice or with
// escapes, a method or id written with escapes, params null.
func decodeRequest(line []byte) (req *jsonrpc.Request, ok bool) {
	if len(line) < 2 || line[0] != '{' {
		return nil, false
	}
	var (
		id                           jsonrpc.ID
		method                       string
		params                       []byte
		sawVersion, sawID, sawMethod bool
		sawParams                    bool
	)
	i := skipSpace(line, 1)
	if i >= len(line) || line[i] != '"' {
		return nil, false
	}
	for {
		// A key: a string without escapes.
		end := bytes.IndexByte(line[i+1:], '"')
		if end < 0 {
			return nil, false
		}
		key := line[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i = skipSpace(line, i+1+end+1)
		if i >= len(line) || line[i] != ':' {
			return nil, false
		}
		i = skipSpace(line, i+1)
		vEnd, ok := skipValue(line, i)
		if !ok {
			return nil, false
		}
		value := line[i:vEnd]
		switch string(key) {
		case "jsonrpc":
			if sawVersion || string(value) != `"2.0"` {
				return nil, false
			}
			sawVersion = true
		case "method":
			s, ok := plainString(value)
			if sawMethod || !ok {
				return nil, false
			}
			method, sawMethod = s, true
		case "id":
			if sawID {
				return nil, false
			}
			sawID = true
			if s, ok := plainString(value); ok {
				id = jsonrpcStringID(s)
			} else if n, ok := smallInt(value); ok {
				id = jsonrpcIntID(n)
			} else {
				return nil, false
			}
		case "params":
			if sawParams || string(value) == "null" {
				return nil, false
			}
			sawParams = true
			params = bytes.Clone(value)
		default:
			return nil, false
		}
		i = skipSpace(line, vEnd)
		if i >= len(line) {
			return nil, false
		}
		if line[i] == '}' {
			if skipSpace(line, i+1) != len(line) {
				return nil, false
			}
			break
		}
		if line[i] != ',' {
			return nil, false
		}
		i = skipSpace(line, i+1)
		if i >= len(line) || line[i] != '"' {
			return nil, false
		}
	}
	if !sawVersion || !sawMethod {
		return nil, false
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: params}, true
}

func jsonrpcStringID(s string) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(s)
	return id
}

func jsonrpcIntID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns where the JSON value that starts at b[i] ends. b is
// valid JSON; ok is false past maxFastDepth.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		end, ok := skipString(b, i)
		return end, ok
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := skipString(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
				if depth > maxFastDepth {
					return 0, false
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j, j > i
	}
}

// skipString returns the end of the string that starts at b[i] (after its
// closing quote).
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// plainString returns the text of a JSON string written without escapes.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// smallInt returns an integer written without fraction or exponent, of at
// most 15 digits (exact as the float64 the SDK decodes ids into).
func smallInt(v []byte) (int64, bool) {
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

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
