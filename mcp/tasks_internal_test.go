package mcp

import (
	"encoding/json"
	"testing"
)

// TestLiftTask: a tools/call's params.task moves under _meta, beside what
// _meta held; other methods, calls without a task (or with a null one, or
// with "task" only inside the arguments) and params that are not an
// object are left as they are.
func TestLiftTask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ method, in, want string }{
		{"tools/call", `{"name":"x","task":{"ttl":5}}`, `{"_meta":{"toolbelt/task":{"ttl":5}},"name":"x"}`},
		{"tools/call", `{"name":"x","_meta":{"progressToken":1},"task":{}}`, `{"_meta":{"progressToken":1,"toolbelt/task":{}},"name":"x"}`},
		{"tools/call", `{"name":"x","arguments":{"task":"say hi"}}`, `{"name":"x","arguments":{"task":"say hi"}}`},
		{"tools/call", `{"name":"x","task":null}`, `{"name":"x","task":null}`},
		{"tools/call", `[1,"task"]`, `[1,"task"]`},
		{"prompts/get", `{"name":"x","task":{}}`, `{"name":"x","task":{}}`},
	} {
		got := liftTask(c.method, json.RawMessage(c.in))
		if string(got) != c.want {
			t.Errorf("%s %s: got %s, want %s", c.method, c.in, got, c.want)
		}
	}
	body := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","task":{}}}`)
	if got := string(liftTaskBody(body)); got != `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"toolbelt/task":{}},"name":"x"}}` {
		t.Errorf("liftTaskBody = %s", got)
	}
}
