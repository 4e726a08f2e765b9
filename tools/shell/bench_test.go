package shell

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// BenchmarkExec measures exec calls through the pipeline, from the call to
// the result: a command that does nothing, the same in the sandbox, and a
// command printing 100 MB (reported as throughput).
func BenchmarkExec(b *testing.B) {
	run := func(b *testing.B, e *env, args map[string]any) {
		raw, err := json.Marshal(args)
		if err != nil {
			b.Fatal(err)
		}
		call := tool.Call{ID: "bench", Name: "exec", Arguments: raw}
		b.ReportAllocs()
		for b.Loop() {
			if msg := e.runner.Run(context.Background(), call); msg.IsError {
				b.Fatal(text(msg))
			}
		}
	}
	b.Run("true", func(b *testing.B) {
		run(b, newEnv(b, nil), map[string]any{"command": "true"})
	})
	b.Run("true/sandbox", func(b *testing.B) {
		root, _ := sandboxWorkspace(b)
		run(b, sandboxed(b, root, nil), map[string]any{"command": "true"})
	})
	b.Run("output-100MB", func(b *testing.B) {
		b.SetBytes(100 << 20)
		run(b, newEnv(b, nil), map[string]any{"command": "head -c 104857600 /dev/zero", "yieldMs": 600_000})
	})
}
