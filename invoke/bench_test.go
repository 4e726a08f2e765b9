package invoke_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// fiveFields is the schema of the benchmark's no-op tool.
func fiveFields() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"path":    {Type: "string", MinLength: jsonschema.Ptr(1)},
			"offset":  {Type: "integer", Minimum: jsonschema.Ptr(1.0)},
			"limit":   {Type: "integer", Maximum: jsonschema.Ptr(10000.0)},
			"mode":    {Type: "string", Enum: []any{"text", "lines"}},
			"numbers": {Type: "boolean"},
		},
		Required:             []string{"path"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

var noopResult = tool.Text("ok")

func noopTool(name string) tool.Tool {
	return tool.Tool{
		Name:        name,
		Description: "does nothing",
		Parameters:  fiveFields(),
		Execute: func(ctx context.Context, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
			return noopResult, nil
		},
	}
}

var fiveArgs = json.RawMessage(`{"path":"src/main.go","offset":10,"limit":200,"mode":"lines","numbers":true}`)

// BenchmarkNoopCall runs one no-op call with a 5-field schema: through the
// skeleton (resolve, decode, validate, execute, result message: the
// arguments and validate steps only), through the complete pipeline with
// every default step, and through it for a caller (invoke.WithCaller) in
// a workspace: "caller" as the MCP server runs a client's calls (another
// session than the runner's), "session" as the session host runs a
// session's (the session its runner was made for).
func BenchmarkNoopCall(b *testing.B) {
	mcp := &tool.Identity{SessionKey: "s1", Channel: "mcp", Principal: "bob"}
	session := &tool.Identity{SessionKey: "s1", Channel: "cli", Owner: true}
	for _, bc := range []struct {
		name   string
		opts   []invoke.Option
		caller *tool.Identity
	}{
		{"skeleton", []invoke.Option{invoke.WithSteps(func(steps []invoke.Step) []invoke.Step {
			return slices.DeleteFunc(steps, func(s invoke.Step) bool { return s.Name != "arguments" && s.Name != "validate" })
		})}, nil},
		{"complete", nil, nil},
		{"caller", nil, mcp},
		{"session", nil, session},
	} {
		b.Run(bc.name, func(b *testing.B) {
			reg := registry.New()
			if err := reg.Register(noopTool("noop")); err != nil {
				b.Fatal(err)
			}
			var tc *tool.Context
			ctx := context.Background()
			if bc.caller != nil {
				tc = benchContext(b.TempDir())
				ctx = invoke.WithCaller(ctx, *bc.caller)
			}
			r := invoke.New(reg, tc, bc.opts...)
			call := tool.Call{ID: "call_1", Name: "noop", Arguments: fiveArgs}
			if msg := r.Run(ctx, call); msg.IsError {
				b.Fatal(msg.Content[0].Text)
			}
			b.ReportAllocs()
			for b.Loop() {
				r.Run(ctx, call)
			}
		})
	}
}

// BenchmarkBatch64 runs a model turn of 64 no-op calls.
func BenchmarkBatch64(b *testing.B) {
	reg := registry.New()
	if err := reg.Register(noopTool("noop")); err != nil {
		b.Fatal(err)
	}
	r := invoke.New(reg, nil)
	calls := make([]tool.Call, 64)
	for i := range calls {
		calls[i] = tool.Call{ID: fmt.Sprintf("call_%d", i), Name: "noop", Arguments: fiveArgs}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r.RunBatch(ctx, calls)
	}
}

// benchContext is the tool context of the caller benchmarks: a workspace,
// session s1 run for the owner at the terminal.
func benchContext(dir string) *tool.Context {
	return &tool.Context{Identity: tool.Identity{Workspace: dir, SessionKey: "s1", Channel: "cli", Owner: true}}
}
