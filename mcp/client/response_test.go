package client

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// responseLines are messages a server may write: the shape decodeResponse
// takes, and others it must leave to the SDK's decoder.
var responseLines = []struct {
	line string
	fast bool // decodeResponse must take it
}{
	{`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"x"}}`, true},
	{` { "jsonrpc" : "2.0" ,` + "\n\t" + `"id" : 123456789012345 , "result" : [ 1 , "a\"}]" , { "b" : null } ] } `, true},
	{`{"jsonrpc":"2.0","id":0,"result":{}}`, true},
	{`{"jsonrpc":"2.0","id":7,"result":{"text":"naïve \u00e9 \ud83d\ude00 <b> & \\ \/"}}`, true},
	{`{"jsonrpc":"2.0","id":7,"result":{"bad":"a` + "\xff" + `b"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, true},
	{`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":01}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":"tab` + "\t" + `"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":1}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":1},"x":2}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":"text"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":null}`, false},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, false},
	{`{"jsonrpc":"2.0","id":"s1","result":{}}`, false},
	{`{"jsonrpc":"2.0","id":-1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1e3,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1234567890123456,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":01,"result":{}}`, false},
	{`{"jsonrpc":"1.0","id":1,"result":{}}`, false},
	{`{"id":1,"jsonrpc":"2.0","result":{}}`, false},
	{`{"jsonrpc":"2.0","result":{},"id":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, false},
	{`{"jsonrpc":"2.0","\u0069d":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":"\u12"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":[1,2}}`, false},
	{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, false},
	{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, false},
}

// TestDecodeResponseIsTheSDKs: what decodeResponse decodes,
// jsonrpc.DecodeMessage decodes to the same Response; it takes the shape
// servers write and leaves the rest to the SDK.
func TestDecodeResponseIsTheSDKs(t *testing.T) {
	t.Parallel()
	for _, tc := range responseLines {
		resp, ok := decodeResponse([]byte(tc.line))
		if ok != tc.fast {
			t.Errorf("%.120s: taken %v, want %v", tc.line, ok, tc.fast)
		}
		if ok {
			sameAsTheSDK(t, tc.line, resp)
		}
	}
}

// sameAsTheSDK fails the test unless the SDK decodes line to resp.
func sameAsTheSDK(t *testing.T, line string, resp *jsonrpc.Response) {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(line))
	if err != nil {
		t.Fatalf("%.120s: decoded, but the SDK refuses it: %v", line, err)
	}
	if !reflect.DeepEqual(msg, resp) {
		t.Fatalf("%.120s:\n%#v\nthe SDK decodes\n%#v", line, resp, msg)
	}
}

// FuzzDecodeResponse: whatever decodeResponse decodes, the SDK decodes to
// the same Response.
func FuzzDecodeResponse(f *testing.F) {
	for _, tc := range responseLines {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if resp, ok := decodeResponse([]byte(line)); ok {
			sameAsTheSDK(t, line, resp)
		}
	})
}
