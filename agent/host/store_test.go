package host_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// failing is a store of sessions that cannot read session key once broken.
type failing struct {
	host.Sessions
	key    string
	broken atomic.Bool
}

var errDisk = errors.New("disk I/O error")

func (f *failing) Info(ctx context.Context, key string) (store.SessionInfo, error) {
	if key == f.key && f.broken.Load() {
		return store.SessionInfo{}, errDisk
	}
	return f.Sessions.Info(ctx, key)
}

// TestSpawnFailsClosedWhenTheStoreFails: a kept sub-agent's session runs
// below a lead the host does not run; when the store then fails to read
// the lead, the lead's maxDepth cannot be checked, so a spawn from the
// sub-agent is refused, saying why, and nothing is spawned.
func TestSpawnFailsClosedWhenTheStoreFails(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{chat("ok")}})
	const lead, child = "agent:lead:main", "agent:worker:subagent:000000000001"
	f := &failing{key: lead}
	h, st := newHostOver(t, s, func(ss host.Sessions) host.Sessions { f.Sessions = ss; return f },
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}, MaxDepth: 1},
		host.Agent{ID: "worker", Model: "openai/worker", Allow: []string{"worker"}, MaxDepth: 5})
	keep(t, st,
		store.SessionStart{ID: lead, As: tool.Identity{AgentID: "lead", Owner: true}},
		store.SessionStart{ID: child, ParentKey: lead, As: tool.Identity{AgentID: "worker", Owner: true, Subagent: true}})
	ctx := context.Background()
	if err := h.StartSession(context.Background(), host.Spec{Key: child, As: tool.Identity{Owner: true}, Model: "openai/worker"}, nil, llm.UserText("go on")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	f.broken.Store(true)
	_, err := h.Spawn(ctx, tool.SpawnRequest{ParentKey: child, Task: "deeper", AgentID: "worker"})
	if !errors.Is(err, errDisk) || !strings.Contains(err.Error(), "the depth limits (subagents.maxDepth) cannot be checked") {
		t.Errorf("Spawn = %v, want a refusal for the store's error", err)
	}
	if below, err := st.Sessions().List(ctx, store.SessionFilter{ParentKey: child}); err != nil || len(below) != 0 {
		t.Errorf("a sub-agent was spawned below a session whose depth limits are not known: %v %+v", err, below)
	}
}

// stalled is a store of sessions whose reads of session key wait, once
// blocked, until released or until the caller's context is done.
type stalled struct {
	host.Sessions
	key      string
	blocked  chan struct{} // closed when a read of key waits
	once     sync.Once
	released chan struct{}
}

func newStalled(key string) *stalled {
	return &stalled{key: key, blocked: make(chan struct{}), released: make(chan struct{})}
}

func (s *stalled) Info(ctx context.Context, key string) (store.SessionInfo, error) {
	if key == s.key {
		s.once.Do(func() { close(s.blocked) })
		select {
		case <-s.released:
		case <-ctx.Done():
			return store.SessionInfo{}, ctx.Err()
		}
	}
	return s.Sessions.Info(ctx, key)
}

// TestStalledStoreHoldsUpOnlyItsSession: while the store does not answer a
// read of one session, the host starts another session, which runs to its
// end; then the stalled start ends with its caller's context.
func TestStalledStoreHoldsUpOnlyItsSession(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{chat("Done.")}})
	const slow, quick = "agent:lead:slow", "agent:lead:quick"
	st := newStalled(slow)
	h, _ := newHostOver(t, s, func(ss host.Sessions) host.Sessions { st.Sessions = ss; return st },
		host.Agent{ID: "lead", Model: "openai/lead"})
	as := tool.Identity{AgentID: "lead", Owner: true}
	ctx, cancel := context.WithCancel(context.Background())
	stalledErr := make(chan error, 1)
	go func() {
		stalledErr <- h.StartSession(ctx, host.Spec{Key: slow, As: as, Model: "openai/lead"}, nil, llm.UserText("slow"))
	}()
	<-st.blocked
	if err := h.StartSession(context.Background(), host.Spec{Key: quick, As: as, Model: "openai/lead"}, nil, llm.UserText("quick")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tr, err := h.Result(quick); err != nil || len(tr) != 2 || tr[1].Text() != "Done." {
		t.Errorf("the other session's run: %v, %v", tr, err)
	}
	cancel()
	if err := <-stalledErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the stalled Start returned %v once its context was cancelled, want context.Canceled", err)
	}
}

// TestCancelledCallReturnsWhileItsSessionWaits: while the store does not
// answer a read of a session, other work for that session waits for it,
// but returns as soon as its own context is done.
func TestCancelledCallReturnsWhileItsSessionWaits(t *testing.T) {
	t.Parallel()
	const slow = "agent:lead:slow"
	st := newStalled(slow)
	h, _ := newHostOver(t, llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "Done.")}), func(ss host.Sessions) host.Sessions { st.Sessions = ss; return st },
		host.Agent{ID: "lead", Model: "openai/lead"})
	as := tool.Identity{AgentID: "lead", Owner: true}
	first := make(chan error, 1)
	go func() {
		first <- h.StartSession(context.Background(), host.Spec{Key: slow, As: as, Model: "openai/lead"}, nil, llm.UserText("first"))
	}()
	<-st.blocked
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.StartSession(ctx, host.Spec{Key: slow, As: as, Model: "openai/lead"}, nil, llm.UserText("second")); !errors.Is(err, context.Canceled) {
		t.Errorf("a second Start of the stalled session returned %v, want context.Canceled", err)
	}
	if err := h.Deliver(ctx, slow, llm.UserText("more")); !errors.Is(err, context.Canceled) {
		t.Errorf("Deliver to the stalled session returned %v, want context.Canceled", err)
	}
	close(st.released)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestTranscript: a session's messages come back in order; one that cannot
// be read is an error naming it; a session the store does not hold has
// none.
func TestTranscript(t *testing.T) {
	t.Parallel()
	h, st := newHost(t, llmtest.New(t))
	ctx := context.Background()
	const good, bad = "agent:lead:good", "agent:lead:bad"
	for key, bodies := range map[string][]string{
		good: {`{"role":"user","content":[{"type":"text","text":"hi"}]}`, `{"role":"assistant","content":[{"type":"text","text":"hello"}]}`},
		bad:  {`{"role":"user","content":[{"type":"text","text":"hi"}]}`, `{"role":7}`},
	} {
		rows := make([]store.SessionMessage, len(bodies))
		for i, b := range bodies {
			rows[i] = store.SessionMessage{Role: "user", Body: []byte(b)}
		}
		if err := st.Sessions().Append(ctx, key, "/ws", "openai/lead", rows); err != nil {
			t.Fatal(err)
		}
	}
	if tr, err := h.Transcript(ctx, good); err != nil || len(tr) != 2 || tr[0].Text() != "hi" || tr[1].Role != llm.RoleAssistant || tr[1].Text() != "hello" {
		t.Errorf("Transcript(good) = %+v, %v", tr, err)
	}
	if _, err := h.Transcript(ctx, bad); err == nil || !strings.Contains(err.Error(), "session agent:lead:bad: message 2 cannot be read") {
		t.Errorf("Transcript(bad) = %v, want an error for message 2", err)
	}
	if tr, err := h.Transcript(ctx, "agent:lead:none"); err != nil || len(tr) != 0 {
		t.Errorf("Transcript(none) = %+v, %v", tr, err)
	}
}
