package dir

import (
	"context"
	"testing"
)

// BenchmarkCallOverhead measures one call of a directory tool through the
// pipeline, handler start and protocol included, for an sh and a Python
// handler that answer at once.
func BenchmarkCallOverhead(b *testing.B) {
	parent := b.TempDir()
	sh := shTool(b, parent, "sh_echo", `echo '{"success":true,"result":"ok"}'`, nil)
	py := writeTool(b, parent, "py_echo", map[string]string{
		"metadata.json": meta("py_echo", nil),
		"schema.json":   objectSchema,
		"handler.py":    "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({\"success\": True, \"result\": \"ok\"}))\n",
	})
	h := newHarness(b, []string{sh, py}, Options{Trusted: true})
	for _, name := range []string{"sh_echo", "py_echo"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if msg := h.call(context.Background(), name, `{"text":"x"}`); msg.IsError || text(msg) != "ok" {
					b.Fatalf("result = %s", text(msg))
				}
			}
		})
	}
}
