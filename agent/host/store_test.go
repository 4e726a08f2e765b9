package host_test

import (
	"context"
	"errors"
	"strings"
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
	if err := h.Start(context.Background(), host.Spec{Key: child, As: tool.Identity{Owner: true}, Model: "openai/worker"}, nil, llm.UserText("go on")); err != nil {
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
