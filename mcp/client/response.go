package client

import (
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
	"github.com/toolbelt/toolbelt/internal/jsonscan"
)

// decodeResponse decodes a success response of the shape servers on the
// SDK write — {"jsonrpc":"2.0","id":N,"result":R}, keys in that order, N
// an integer of at most 15 digits, R an object or array nested at most
// maxResultDepth deep, whitespace anywhere between tokens — as
// jsonrpc.DecodeMessage decodes it. The SDK's decoder reads the message
// through a reader with a buffer that starts at 32 KB and doubles, parsing
// what it holds from the start after every read: a 1,000-tool list (1.2 MB) was
// parsed about twice over (every partial parse is lost) and copied at every
// doubling, before Toolbelt's own listing took it apart.
// Here the result is checked once (a validator that agrees with encoding/json's Valid) and its bytes
// are the Response's, unchanged. ok is false for any other message, which
// DecodeMessage then decodes (and refuses); TestDecodeResponseIsTheSDKs
// and FuzzDecodeResponse hold the two to the same Response.
func decodeResponse(line []byte) (resp *jsonrpc.Response, ok bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, false
	}
	i = skipSpace(line, i+1)
	var id int64
	sawVersion, sawID := false, false
	for {
		var key string
		if key, i, ok = plainKey(line, i); !ok {
			return nil, false
		}
		if i = skipSpace(line, i); i >= len(line) || line[i] != ':' {
			return nil, false
		}
		i = skipSpace(line, i+1)
		switch {
		case key == "jsonrpc" && !sawVersion && !sawID:
			if len(line) < i+5 || string(line[i:i+5]) != `"2.0"` {
				return nil, false
			}
			i += 5
			sawVersion = true
		case key == "id" && sawVersion && !sawID:
			j := i
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j == i || j-i > 15 || line[i] == '0' && j-i > 1 {
				return nil, false
			}
			id, _ = strconv.ParseInt(string(line[i:j]), 10, 64)
			i = j
			sawID = true
		case key == "result" && sawID:
			return lastResult(line, i, id)
		default:
			return nil, false
		}
		if i = skipSpace(line, i); i >= len(line) || line[i] != ',' {
			return nil, false
		}
		i = skipSpace(line, i+1)
	}
}

// maxResultDepth is the nesting the SDK's decoder accepts in a result: it
// refuses messages nested more than 1,000 deep, the message's own object
// counting for one.
const maxResultDepth = 999

// lastResult ends decodeResponse: the result starts at line[i] and must be the
// message's last member.
func lastResult(line []byte, i int, id int64) (*jsonrpc.Response, bool) {
	if i >= len(line) || line[i] != '{' && line[i] != '[' {
		return nil, false
	}
	end, depth := -1, 0
	for j, c := range jsonscan.Brackets(line[i:]) {
		if c == '{' || c == '[' {
			if depth++; depth > maxResultDepth {
				return nil, false
			}
		} else if depth--; depth == 0 {
			end = i + j + 1
			break
		}
	}
	if end < 0 {
		return nil, false
	}
	if k := skipSpace(line, end); k >= len(line) || line[k] != '}' || skipSpace(line, k+1) != len(line) {
		return nil, false
	}
	value := line[i:end:end]
	// segmentio's Valid says what encoding/json's does, faster
	// (TestValidIsEncodingJSONs).
	if !segjson.Valid(value) {
		return nil, false
	}
	rid, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		return nil, false
	}
	return &jsonrpc.Response{ID: rid, Result: json.RawMessage(value)}, true
}

// plainKey reads an object key written without escapes at line[i]: the
// key, and where what follows it starts.
func plainKey(line []byte, i int) (string, int, bool) {
	if i >= len(line) || line[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case c == '"':
			return string(line[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
