package dir

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
)

// persistentPy answers each request line with the handler's pid, or
// sleeps, or exits, as the text argument says.
const persistentPy = `import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    text = req["arguments"]["text"]
    if text == "sleep":
        time.sleep(300)
    if text == "die":
        sys.exit(4)
    print(json.dumps({"progress": 50, "message": "working"}), file=sys.stderr, flush=True)
    print(json.dumps({"callId": "stale-" + req["callId"], "success": True, "result": "stale"}), flush=True)
    print(json.dumps({"callId": req["callId"], "success": True, "result": str(os.getpid())}), flush=True)
`

func persistentTool(t testing.TB) string {
	return writeTool(t, t.TempDir(), "keeper", map[string]string{
		"metadata.json": meta("keeper", map[string]any{"persistent": true}),
		"schema.json":   objectSchema,
		"handler.py":    persistentPy,
	})
}

func TestPersistentHandler(t *testing.T) {
	t.Parallel()
	dt, err := Load(persistentTool(t), Options{Trusted: true, KillGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil, Options{})
	if err := h.reg.Register(dt.Tool()); err != nil {
		t.Fatal(err)
	}
	defer dt.Close()
	// Only the call that hangs gets a short time limit: Python may take a
	// while to start on a busy machine.
	call := func(arg string) (string, bool) {
		args, _ := json.Marshal(map[string]string{"text": arg})
		var opts []invoke.CallOption
		if arg == "sleep" {
			opts = append(opts, invoke.Timeout(time.Second))
		}
		msg := h.call(context.Background(), "keeper", string(args), opts...)
		return strings.TrimSpace(text(msg)), msg.IsError
	}
	first, isErr := call("a")
	if isErr || atoi(first) <= 0 {
		t.Fatalf("first call = %q: want the handler's pid (a stale answer must be skipped)", first)
	}
	if second, _ := call("b"); second != first {
		t.Errorf("the second call ran in process %s, the first in %s: want one process", second, first)
	}
	got, isErr := call("sleep")
	if !isErr || !strings.Contains(got, "timed out after 1 s") {
		t.Errorf("sleep = %s", got)
	}
	if alive(atoi(first)) {
		t.Errorf("the timed-out handler %s is still running", first)
	}
	third, isErr := call("c")
	if isErr || third == first {
		t.Errorf("after a timeout: %s (error %v), want a new process", third, isErr)
	}
	got, isErr = call("die")
	if !isErr || !strings.Contains(got, "exited with code 4 without an answer") {
		t.Errorf("die = %s", got)
	}
	if fourth, isErr := call("d"); isErr || fourth == third {
		t.Errorf("after an exit: %s (error %v), want a new process", fourth, isErr)
	}
	dt.Close()
	if got, isErr := call("e"); !isErr || !strings.Contains(got, "has been shut down") {
		t.Errorf("after Close: %s", got)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
