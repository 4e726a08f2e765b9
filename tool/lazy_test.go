package tool

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func nothing(context.Context, Call, *Context, UpdateFunc) (Result, error) { return Result{}, nil }

func decodeSchema(v any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	return &s, json.Unmarshal(b, &s)
}

// TestLazyParameters: a tool with lazy parameters converts them once, on
// the first Params, however many callers ask at once; ParamsDoc gives the
// form they came in without converting; ParamsKey tells schemas apart
// without converting; Parameters, when set, win.
func TestLazyParameters(t *testing.T) {
	doc := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	var n atomic.Int64
	lazy := NewLazyParameters(doc, func(v any) (*jsonschema.Schema, error) {
		n.Add(1)
		return decodeSchema(v)
	})
	tl := Tool{Name: "t", LazyParameters: lazy}
	if d, ok := tl.ParamsDoc(); !ok || d.(map[string]any)["type"] != "object" {
		t.Errorf("ParamsDoc = %v, %v", d, ok)
	}
	if tl.ParamsKey() != any(lazy) {
		t.Error("ParamsKey is not the lazy parameters")
	}
	if n.Load() != 0 {
		t.Fatalf("converted %d times before Params", n.Load())
	}
	var wg sync.WaitGroup
	got := make([]*jsonschema.Schema, 8)
	for i := range got {
		wg.Go(func() { got[i] = tl.Params() })
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("converted %d times", n.Load())
	}
	for _, s := range got {
		if s != got[0] || s.Type != "object" || s.Properties["q"].Type != "string" {
			t.Errorf("Params = %+v", s)
		}
	}
	copied := tl // tools are values: a copy shares the conversion
	if copied.Params() != got[0] || n.Load() != 1 {
		t.Error("a copy of the tool converted again")
	}

	eager := &jsonschema.Schema{Type: "object"}
	tl.Parameters = eager
	if tl.Params() != eager || tl.ParamsKey() != any(eager) {
		t.Error("Parameters do not win over lazy parameters")
	}
	if _, ok := tl.ParamsDoc(); ok {
		t.Error("ParamsDoc with Parameters set")
	}
	if (&Tool{}).ParamsKey() != nil || (&Tool{}).Params() != nil {
		t.Error("a tool without parameters has some")
	}

	failing := Tool{LazyParameters: NewLazyParameters(doc, func(any) (*jsonschema.Schema, error) { return nil, errors.New("no") })}
	if s := failing.Params(); s == nil || s.Not == nil {
		t.Errorf("a failed conversion gives %+v, want a schema refusing everything", s)
	}
}

// TestCheckLazyParameters: Check refuses lazy parameters that do not
// describe an object with the words it uses for Parameters.
func TestCheckLazyParameters(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want string
	}{
		{`{"type":"object"}`, ""},
		{`{"properties":{}}`, ""},
		{`{"type":["object"]}`, ""},
		{`true`, ""},
		{`{"type":"string"}`, `tool "t": parameters must describe a JSON object, not "string"`},
		{`{"type":["string","null"]}`, `tool "t": parameters must describe a JSON object, not "string|null"`},
	} {
		var doc any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		lazy := Tool{Name: "t", Execute: nothing, LazyParameters: NewLazyParameters(doc, decodeSchema)}
		eagerParams, err := decodeSchema(doc)
		if err != nil {
			t.Fatal(err)
		}
		eager := Tool{Name: "t", Execute: nothing, Parameters: eagerParams}
		lerr, eerr := lazy.Check(), eager.Check()
		got, want := "", ""
		if lerr != nil {
			got = lerr.Error()
		}
		if eerr != nil {
			want = eerr.Error()
		}
		if got != c.want || got != want {
			t.Errorf("%s: Check says %q, with Parameters %q, want %q", c.doc, got, want, c.want)
		}
	}
}
