package dir

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkCallOverhead measures one call of a directory tool through the
// pipeline, handler start and protocol included, for an sh and a Python
// handler that answer at once, one process per call, and a persistent
// Python handler. py_echo runs python3 as found on PATH (which may be a
// version manager's shim), py_direct the interpreter it resolves to.
func BenchmarkCallOverhead(b *testing.B) {
	parent := b.TempDir()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Skip("python3 is not available:", err)
	}
	direct := writeTool(b, parent, "py_direct", map[string]string{
		"metadata.json": meta("py_direct", map[string]any{"interpreter": strings.TrimSpace(string(out))}),
		"schema.json":   objectSchema,
		"handler.py":    "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({\"success\": True, \"result\": \"ok\"}))\n",
	})
	sh := shTool(b, parent, "sh_echo", `echo '{"success":true,"result":"ok"}'`, nil)
	py := writeTool(b, parent, "py_echo", map[string]string{
		"metadata.json": meta("py_echo", nil),
		"schema.json":   objectSchema,
		"handler.py":    "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({\"success\": True, \"result\": \"ok\"}))\n",
	})
	pers := writeTool(b, parent, "py_persistent", map[string]string{
		"metadata.json": meta("py_persistent", map[string]any{"persistent": true}),
		"schema.json":   objectSchema,
		"handler.py":    "import json, sys\nfor line in sys.stdin:\n    req = json.loads(line)\n    print(json.dumps({\"callId\": req[\"callId\"], \"success\": True, \"result\": \"ok\"}), flush=True)\n",
	})
	h := newHarness(b, []string{sh, py, direct, pers}, Options{Trusted: true})
	b.Cleanup(func() {
		for _, t := range h.dirTools {
			t.Close()
		}
	})
	for _, name := range []string{"sh_echo", "py_echo", "py_direct", "py_persistent"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if msg := h.call(context.Background(), name, `{"text":"x"}`); msg.IsError || text(msg) != "ok" {
					b.Fatalf("result = %s", text(msg))
				}
			}
		})
	}
}
