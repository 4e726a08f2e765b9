package host_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/lifecycle/lifecycletest"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tool"
)

// TestMain fails the package when a goroutine (a session's run loop)
// outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ lifecycle.Service = (*host.Host)(nil)

const gatedKey = "agent:lead:main"

// gatedRun starts a host whose session's model answers once release is
// called; the run is under way when it returns.
func gatedRun(t *testing.T) (h *host.Host, release func()) {
	t.Helper()
	gate, asked := make(chan struct{}), make(chan struct{})
	s := llmtest.New(t, by(func(string) llmtest.Response {
		close(asked)
		<-gate
		return chat("done")
	}))
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	h, _ = newHost(t, s, host.Agent{ID: "lead", Model: "openai/lead"})
	if err := h.StartSession(context.Background(), host.Spec{Key: gatedKey, As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	<-asked
	return h, release
}

// TestHostStopLetsRunFinish: Stop refuses new sessions at once, lets the
// run under way finish, and returns after it ended.
func TestHostStopLetsRunFinish(t *testing.T) {
	t.Parallel()
	h, release := gatedRun(t)
	ctx, waiting := lifecycletest.Watched(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop(ctx) }()
	<-waiting
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:other", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead", Transient: true}, nil, llm.UserText("late")); err == nil {
		t.Error("a session started while the host stopped")
	}
	release()
	if err := <-stopped; err != nil {
		t.Errorf("Stop = %v", err)
	}
	transcript, err := h.Result(gatedKey)
	if err != nil || len(transcript) == 0 || transcript[len(transcript)-1].Text() != "done" {
		t.Errorf("the run under way ended with %v: %+v", err, transcript)
	}
}

// TestHostStopCancelsRunWhenContextEnds: once Stop's context has ended,
// the run under way is cancelled, and its end is recorded before Stop
// returns.
func TestHostStopCancelsRunWhenContextEnds(t *testing.T) {
	t.Parallel()
	h, _ := gatedRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v, want the context's error", err)
	}
	if _, err := h.Result(gatedKey); err == nil {
		t.Error("the cancelled run ended without an error")
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestHostStopTwiceAndWithoutStart: a host not started runs nothing; Stop
// is idempotent and safe before Start; a stopped host does not start
// again.
func TestHostStopTwiceAndWithoutStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := host.New(host.Options{})
	if err := h.StartSession(ctx, host.Spec{Key: "k", Transient: true}, nil, llm.UserText("hi")); err == nil {
		t.Error("a session started before the host did")
	}
	for i := range 2 {
		if err := h.Stop(ctx); err != nil {
			t.Errorf("Stop #%d = %v", i+1, err)
		}
	}
	if err := h.Start(ctx); err == nil {
		t.Error("Start after Stop succeeded")
	}
}
