package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// splitCases are tools/list results: the shapes splitResult takes, and
// others it must leave to decodeResult.
var splitCases = []struct {
	result string
	fast   bool // splitResult must take it
}{
	{`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"x","ttlMs":5000,"cacheScope":"public"}`, true},
	{` { "ttlMs" : 0 , "tools" : [ null , { "name" : "b\"]}" } , 1 , "s" , [ ] , true ] , "_meta" : { "k" : [ 1 , 2 ] } } `, true},
	{`{"tools":[]}`, true},
	{`{"tools":[ ]}`, true},
	{`{"x":-1.5e3,"tools":[{}],"y":"é\u00e9\ud83d\ude00"}`, true},
	{`{"tools":[{"name":"a` + "\xff" + `"}]}`, true},
	{`{"tools":[],"k` + "\xfe" + `":1}`, false},
	{`{"tools":null}`, false},
	{`{"tools":{}}`, false},
	{`{"tools":"[]"}`, false},
	{`{}`, false},
	{`{"nextCursor":"x"}`, false},
	{`{"tools":[],"tools":[{"name":"twice"}]}`, false},
	{`{"t\u006fols":[{"name":"escaped key"}]}`, false},
	{`{"tools":[{"name":"a"}],"Tools":[]}`, true},
	{`[]`, false},
	{`"tools"`, false},
}

// TestSplitResultIsTakeTools: what splitResult takes, decodeResult (the
// decoding way) gives the same members and tools, and takeTools the same
// rest; the corpus's lists are taken.
func TestSplitResultIsTakeTools(t *testing.T) {
	t.Parallel()
	for _, tc := range splitCases {
		_, _, ok := splitResult([]byte(tc.result))
		if ok != tc.fast {
			t.Errorf("%.100s: taken %v, want %v", tc.result, ok, tc.fast)
		}
		sameSplit(t, tc.result)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "mcp-tools", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatal("no corpus files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := splitResult(b); !ok {
			t.Errorf("%s: not taken", f)
		}
		sameSplit(t, string(b))
	}
}

// sameSplit fails the test unless splitResult, where it takes result,
// gives decodeResult's members and tools, and takeTools its rest.
func sameSplit(t *testing.T, result string) {
	t.Helper()
	fields, tools, ok := splitResult([]byte(result))
	if !ok {
		return
	}
	wantFields, wantTools, wantOK, err := decodeResult(json.RawMessage(result))
	if !wantOK || err != nil {
		t.Fatalf("%.100s: split, but decoding gives %v, %v", result, wantOK, err)
	}
	compact := func(m map[string]json.RawMessage) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := compact(fields), compact(wantFields); got != want {
		t.Fatalf("%.100s: members\n%s\nwant\n%s", result, got, want)
	}
	if !reflect.DeepEqual(tools, wantTools) {
		t.Fatalf("%.100s: tools\n%q\nwant\n%q", result, tools, wantTools)
	}
	rest, _, took, err := takeTools(json.RawMessage(result))
	var members map[string]json.RawMessage
	if !took || err != nil || json.Unmarshal(rest, &members) != nil {
		t.Fatalf("%.100s: takeTools %s, %v, %v", result, rest, took, err)
	}
	if _, ok := members["ttlMs"]; ok || string(members["tools"]) != "[]" {
		t.Fatalf("%.100s: takeTools leaves %s", result, rest)
	}
}

// FuzzSplitResult: whatever valid JSON splitResult takes, decoding gives
// the same; no input makes it panic.
func FuzzSplitResult(f *testing.F) {
	for _, tc := range splitCases {
		f.Add(tc.result)
	}
	f.Fuzz(func(t *testing.T, result string) {
		splitResult([]byte(result)) // any input: no panic
		if !json.Valid([]byte(result)) {
			return
		}
		sameSplit(t, result)
	})
}
