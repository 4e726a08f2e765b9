package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flagHandler sets the flag kept in flag.txt in the workspace, answering
// with the value before as its undo data, and puts that back for undo.
const flagHandler = `import json, os, sys
req = json.load(sys.stdin)
path = os.path.join(req["context"]["workspace"], "flag.txt")
old = open(path).read() if os.path.exists(path) else ""
if req["operation"] == "undo":
    open(path, "w").write(req["undo"]["old"])
    print(json.dumps({"success": True, "result": "restored " + req["undo"]["old"]}))
else:
    open(path, "w").write(req["arguments"]["value"])
    print(json.dumps({"success": True, "result": "set", "undo": {"old": old}}))
`

func TestDirectoryToolUndoFromAnotherProcess(t *testing.T) {
	t.Parallel()
	tools := t.TempDir()
	writeToolFolder(t, filepath.Join(tools, "flag_set"), 0o644, map[string]string{
		"metadata.json": `{"name": "flag_set", "description": "Set the flag.", "riskLevel": "low", "undo": true}`,
		"schema.json":   `{"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}`,
		"handler.py":    flagHandler,
	})
	env, ws, _ := dirToolsEnv(t, "    - path: "+tools+"\n      trusted: true\n")
	flag := filepath.Join(ws, "flag.txt")
	if err := os.WriteFile(flag, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLIWith(t, env, "", "", "call", "flag_set", "--id", "call_f1", "--args", `{"value": "new"}`).expect(t, 0)
	if b, _ := os.ReadFile(flag); string(b) != "new" {
		t.Fatalf("flag after the call = %q", b)
	}

	r := runCLIWith(t, env, "", "", "undo", "call_f1").expect(t, 0)
	if !strings.Contains(r.stdout, "restored old") {
		t.Errorf("undo printed %q, want the handler's answer", r.stdout)
	}
	if b, _ := os.ReadFile(flag); string(b) != "old" {
		t.Fatalf("flag after undo = %q, want old", b)
	}
	r = runCLIWith(t, env, "", "", "audit", "--json").expect(t, 0)
	if !strings.Contains(r.stdout, `"undoOf": "call_f1"`) && !strings.Contains(r.stdout, `"undoOf":"call_f1"`) {
		t.Errorf("no audit record marks the undo of call_f1:\n%s", r.stdout)
	}

	r = runCLIWith(t, env, "", "", "undo", "call_f1").expect(t, 1)
	if !strings.Contains(r.stderr, "nothing to undo for call call_f1 (flag_set)") {
		t.Errorf("a second undo said %q", r.stderr)
	}
	runCLIWith(t, env, "", "", "call", "text_stats", "--id", "call_t1", "--args", `{"text": "a b"}`).expect(t, 0)
	r = runCLIWith(t, env, "", "", "undo", "call_t1").expect(t, 1)
	if !strings.Contains(r.stderr, "nothing to undo for call call_t1 (text_stats)") || !strings.Contains(r.stderr, "its tool has no undo step") {
		t.Errorf("undo of a tool without an undo step said %q", r.stderr)
	}
}
