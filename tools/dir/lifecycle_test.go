package dir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/lifecycle/lifecycletest"
	"github.com/toolbelt/toolbelt/tool"
)

// TestMain fails the package when a goroutine (a watcher, a persistent
// handler's output reader) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ lifecycle.Service = (*Loader)(nil)

// waiterPy is a persistent handler that, for each request, creates the
// file "entered" in the folder its text names, waits for the file
// "release" there, and answers "released".
const waiterPy = `import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    d = req["arguments"]["text"]
    open(os.path.join(d, "entered"), "w").close()
    while not os.path.exists(os.path.join(d, "release")):
        time.sleep(0.01)
    print(json.dumps({"callId": req["callId"], "success": True, "result": "released"}), flush=True)
`

// startedWithCall starts a loader of a persistent tool and a call of it,
// returning once the handler is at work on the call, with the folder the
// call waits in and where its result comes.
func startedWithCall(t *testing.T) (*Loader, string, <-chan tool.ResultMessage) {
	t.Helper()
	src := t.TempDir()
	writeTool(t, src, "waiter", map[string]string{
		"metadata.json": meta("waiter", map[string]any{"persistent": true}),
		"schema.json":   objectSchema,
		"handler.py":    waiterPy,
	})
	h := newHarness(t, nil, Options{})
	l := NewLoader(h.reg, []Source{{Path: src, Trusted: true}}, Options{Trusted: true, KillGrace: 100 * time.Millisecond}, nil)
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Stop(context.Background()) })
	gate := t.TempDir()
	results := make(chan tool.ResultMessage, 1)
	args, _ := json.Marshal(map[string]string{"text": gate})
	go func() { results <- h.call(context.Background(), "waiter", string(args)) }()
	// The handler says it has the call by making a file: wait for it.
	for {
		if _, err := os.Stat(filepath.Join(gate, "entered")); err == nil {
			break
		}
		select {
		case msg := <-results:
			t.Fatalf("the call ended before it reached the handler: %s", text(msg))
		case <-time.After(10 * time.Millisecond):
		}
	}
	return l, gate, results
}

// TestLoaderStopLetsCallFinish: Stop waits for the call under way on a
// persistent handler, then stops the handler.
func TestLoaderStopLetsCallFinish(t *testing.T) {
	t.Parallel()
	l, gate, results := startedWithCall(t)
	ctx, waiting := lifecycletest.Watched(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- l.Stop(ctx) }()
	<-waiting
	if err := os.WriteFile(filepath.Join(gate, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := <-results; msg.IsError || !strings.Contains(text(msg), "released") {
		t.Errorf("the call under way: %s", text(msg))
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop = %v", err)
	}
}

// TestLoaderStopCutsCallWhenContextEnds: once Stop's context has ended,
// the handler is stopped under the call, which ends.
func TestLoaderStopCutsCallWhenContextEnds(t *testing.T) {
	t.Parallel()
	l, _, results := startedWithCall(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Stop(ctx); err == nil {
		t.Error("Stop = nil, want the context's error")
	}
	if msg := <-results; !msg.IsError {
		t.Errorf("the call cut short succeeded: %s", text(msg))
	}
}

// TestLoaderStopTwiceAndWithoutStart: Stop is idempotent and safe before
// Start; a stopped loader does not start again.
func TestLoaderStopTwiceAndWithoutStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, started := range []bool{false, true} {
		l := NewLoader(newHarness(t, nil, Options{}).reg, []Source{{Path: t.TempDir(), Trusted: true}}, Options{}, nil)
		if started {
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if err := l.Stop(ctx); err != nil {
				t.Errorf("started %v: Stop #%d = %v", started, i+1, err)
			}
		}
		if err := l.Start(ctx); err == nil {
			t.Errorf("started %v: Start after Stop succeeded", started)
		}
	}
}

// chattyPy is a persistent handler that answers each request, then says
// more than anyone reads.
const chattyPy = `import json, sys
for line in sys.stdin:
    req = json.loads(line)
    print(json.dumps({"callId": req["callId"], "success": True, "result": "ok"}), flush=True)
    for i in range(3):
        print(json.dumps({"note": i}), flush=True)
`

// TestStoppedHandlerLeavesNoReader: a persistent handler stopped with
// lines of output no call reads leaves no goroutine reading them. It does
// not run in parallel, so that goleak sees only its own goroutines.
func TestStoppedHandlerLeavesNoReader(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	folder := writeTool(t, t.TempDir(), "chatty", map[string]string{
		"metadata.json": meta("chatty", map[string]any{"persistent": true}),
		"schema.json":   objectSchema,
		"handler.py":    chattyPy,
	})
	dt, err := Load(folder, Options{Trusted: true, KillGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil, Options{})
	if err := h.reg.Register(dt.Tool()); err != nil {
		t.Fatal(err)
	}
	if msg := h.call(context.Background(), "chatty", `{"text":"hi"}`); msg.IsError {
		t.Fatalf("the call: %s", text(msg))
	}
	dt.Close()
}
