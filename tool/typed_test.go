package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

type inner struct {
	Deep  string `json:"deep" pattern:"^x"`
	Count uint8  `json:"count,omitempty"`
}

type readArgs struct {
	Path    string            `json:"path" jsonschema:"File to read, relative to the workspace" minLength:"1"`
	Offset  int               `json:"offset,omitempty" jsonschema:"1-based line to start at" minimum:"1"`
	Limit   int               `json:"limit,omitempty" minimum:"1" maximum:"5000" default:"2000"`
	Mode    string            `json:"mode,omitempty" enum:"text, lines" default:"text"`
	Tags    []string          `json:"tags,omitempty" enum:"a,b" maxItems:"3" uniqueItems:"true"`
	Ratio   *float64          `json:"ratio,omitempty" exclusiveMinimum:"0" exclusiveMaximum:"1" multipleOf:"0.25"`
	Level   int               `json:"level,omitempty" enum:"1,2,3"`
	Nested  *inner            `json:"nested,omitempty"`
	Items   []inner           `json:"items,omitempty" minItems:"1"`
	Labels  map[string]string `json:"labels,omitempty"`
	URL     string            `json:"url,omitempty" format:"uri" maxLength:"2048"`
	Ignored string            `json:"-"`
	hidden  string
}

func TestNewInfersSchema(t *testing.T) {
	t.Parallel()
	rt, err := tool.New("read", "Read a file.", func(ctx context.Context, in readArgs, inv tool.Invocation) (tool.Result, error) {
		return tool.Text(in.hidden), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(rt.Parameters, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
 "type": "object",
 "properties": {
  "path": {
   "type": "string",
   "description": "File to read, relative to the workspace",
   "minLength": 1
  },
  "offset": {
   "type": "integer",
   "description": "1-based line to start at",
   "minimum": 1
  },
  "limit": {
   "type": "integer",
   "default": 2000,
   "minimum": 1,
   "maximum": 5000
  },
  "mode": {
   "type": "string",
   "default": "text",
   "enum": [
    "text",
    "lines"
   ]
  },
  "tags": {
   "type": "array",
   "items": {
    "type": "string",
    "enum": [
     "a",
     "b"
    ]
   },
   "maxItems": 3,
   "uniqueItems": true
  },
  "ratio": {
   "type": "number",
   "multipleOf": 0.25,
   "exclusiveMinimum": 0,
   "exclusiveMaximum": 1
  },
  "level": {
   "type": "integer",
   "enum": [
    1,
    2,
    3
   ]
  },
  "nested": {
   "type": "object",
   "properties": {
    "deep": {
     "type": "string",
     "pattern": "^x"
    },
    "count": {
     "type": "integer",
     "minimum": 0,
     "maximum": 255
    }
   },
   "required": [
    "deep"
   ],
   "additionalProperties": false
  },
  "items": {
   "type": "array",
   "items": {
    "type": "object",
    "properties": {
     "deep": {
      "type": "string",
      "pattern": "^x"
     },
     "count": {
      "type": "integer",
      "minimum": 0,
      "maximum": 255
     }
    },
    "required": [
     "deep"
    ],
    "additionalProperties": false
   },
   "minItems": 1
  },
  "labels": {
   "type": "object",
   "additionalProperties": {
    "type": "string"
   }
  },
  "url": {
   "type": "string",
   "maxLength": 2048,
   "format": "uri"
  }
 },
 "required": [
  "path"
 ],
 "additionalProperties": false
}`
	if string(got) != want {
		t.Errorf("schema:\n%s\nwant:\n%s", got, want)
	}
}

func TestNewDecodesArgumentsAndDefaults(t *testing.T) {
	t.Parallel()
	var seen readArgs
	var inv tool.Invocation
	rt := tool.Must(tool.New("read", "Read a file.", func(ctx context.Context, in readArgs, i tool.Invocation) (tool.Result, error) {
		seen, inv = in, i
		return tool.Text("ok"), nil
	}))
	tc := &tool.Context{Identity: tool.Identity{Workspace: "/w"}}
	call := tool.Call{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go","offset":3,"nested":{"deep":"xy"}}`)}
	if _, err := rt.Execute(context.Background(), call, tc, func(tool.Result) {}); err != nil {
		t.Fatal(err)
	}
	if seen.Path != "a.go" || seen.Offset != 3 || seen.Limit != 2000 || seen.Mode != "text" || seen.Nested == nil || seen.Nested.Deep != "xy" {
		t.Errorf("decoded %+v", seen)
	}
	if inv.Call.ID != "c1" || inv.Context != tc || inv.Update == nil {
		t.Errorf("invocation %+v", inv)
	}
	// An explicit value wins over the default.
	call.Arguments = json.RawMessage(`{"path":"a.go","limit":5,"mode":"lines"}`)
	if _, err := rt.Execute(context.Background(), call, tc, func(tool.Result) {}); err != nil {
		t.Fatal(err)
	}
	if seen.Limit != 5 || seen.Mode != "lines" {
		t.Errorf("explicit values lost: %+v", seen)
	}
	// Arguments that do not fit the struct are an input error for the model.
	call.Arguments = json.RawMessage(`{"path":5}`)
	_, err := rt.Execute(context.Background(), call, tc, func(tool.Result) {})
	if !tool.IsInputError(err) || !strings.Contains(err.Error(), "parameters of read") {
		t.Errorf("mismatched arguments: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	fn := func(ctx context.Context, in struct {
		N int `json:"n" minimum:"low"`
	}, inv tool.Invocation) (tool.Result, error) {
		return tool.Result{}, nil
	}
	if _, err := tool.New("bad", "", fn); err == nil || !strings.Contains(err.Error(), `minimum:"low"`) {
		t.Errorf("bad bound: %v", err)
	}
	type badDefault struct {
		N int `json:"n" default:"many"`
	}
	if _, err := tool.New("bad", "", func(context.Context, badDefault, tool.Invocation) (tool.Result, error) { return tool.Result{}, nil }); err == nil {
		t.Error("bad default accepted")
	}
	type wrongDefault struct {
		N int `json:"n" default:"\"text\""`
	}
	if _, err := tool.New("bad", "", func(context.Context, wrongDefault, tool.Invocation) (tool.Result, error) { return tool.Result{}, nil }); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("default of the wrong type: %v", err)
	}
	type badEnum struct {
		N int `json:"n" enum:"1,two"`
	}
	if _, err := tool.New("bad", "", func(context.Context, badEnum, tool.Invocation) (tool.Result, error) { return tool.Result{}, nil }); err == nil {
		t.Error("bad enum accepted")
	}
	if _, err := tool.New("bad", "", func(context.Context, string, tool.Invocation) (tool.Result, error) { return tool.Result{}, nil }); err == nil || !strings.Contains(err.Error(), "struct") {
		t.Errorf("non-struct parameters: %v", err)
	}
	if _, err := tool.New[readArgs]("bad name", "", func(context.Context, readArgs, tool.Invocation) (tool.Result, error) { return tool.Result{}, nil }); err == nil {
		t.Error("bad name accepted")
	}
	if _, err := tool.New[readArgs]("nilfn", "", nil); err == nil {
		t.Error("nil function accepted")
	}
}

func TestNewNoParameters(t *testing.T) {
	t.Parallel()
	rt := tool.Must(tool.New("now", "Current time.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text("12:00"), nil
	}))
	b, _ := json.Marshal(rt.Parameters)
	if string(b) != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Errorf("got %s", b)
	}
}

func TestMustPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic")
		}
	}()
	tool.Must(tool.New[readArgs]("bad name", "", func(context.Context, readArgs, tool.Invocation) (tool.Result, error) { return tool.Result{}, nil }))
}

func TestNewPreviewDecodesLikeTheTool(t *testing.T) {
	t.Parallel()
	preview, err := tool.NewPreview("read", func(_ context.Context, in readArgs, inv tool.Invocation) (tool.Effects, error) {
		return tool.Effects{Summary: fmt.Sprintf("read %s from line %d, %d lines", in.Path, in.Offset, in.Limit), Workdir: inv.Context.Workspace}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: "/w"}}
	e, err := preview(context.Background(), tool.Call{Name: "read", Arguments: json.RawMessage(`{"path":"a.go","offset":3}`)}, tc)
	if err != nil || e.Summary != "read a.go from line 3, 2000 lines" || e.Workdir != "/w" {
		t.Errorf("%+v %v", e, err)
	}
	if _, err := preview(context.Background(), tool.Call{Arguments: json.RawMessage(`{"path":5}`)}, tc); !tool.IsInputError(err) {
		t.Errorf("mismatched arguments: %v", err)
	}
	if _, err := tool.NewPreview[readArgs]("x", nil); err == nil {
		t.Error("nil preview accepted")
	}
}

// TestNewStructured: the output schema is inferred from the result type,
// which must be a struct; a call's details are the value, its text the
// value's JSON.
func TestNewStructured(t *testing.T) {
	type out struct {
		N int `json:"n" minimum:"1"`
	}
	st, err := tool.NewStructured("count", "Counts.", func(context.Context, struct{}, tool.Invocation) (out, error) { return out{N: 3}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Output == nil || st.Output.Type != "object" || st.Output.Properties["n"] == nil || st.Output.Properties["n"].Minimum == nil {
		t.Fatalf("output schema %+v", st.Output)
	}
	res, err := st.Execute(context.Background(), tool.Call{Arguments: []byte(`{}`)}, nil, func(tool.Result) {})
	if err != nil || res.Details != (out{N: 3}) || res.Content[0].Text != "{\n  \"n\": 3\n}" {
		t.Errorf("result %+v, %v", res, err)
	}
	if _, err := tool.NewStructured("bad", "Returns a number.", func(context.Context, struct{}, tool.Invocation) (int, error) { return 1, nil }); err == nil || !strings.Contains(err.Error(), "the result must be a struct type") {
		t.Errorf("a non-struct result type: %v", err)
	}
}
