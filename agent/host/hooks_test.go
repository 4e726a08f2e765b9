package host_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tool"
)

// TestSessionAndSubagentHooks: the lead's subagent_start runs when it
// spawns the worker, its subagent_stop when the worker's run has ended,
// with the worker's status and answer; every session's session_start runs
// once and its session_end when the host stops.
func TestSessionAndSubagentHooks(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "count to 3", "agentId": "worker", "label": "counting"}`}),
			chat("Spawned."),
			chat("Done."),
		}},
		llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{chat("1 2 3")}},
	)
	var mu sync.Mutex
	var got []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	}
	h, _ := newHostWith(t, s, func(o *host.Options) {
		build := o.Build
		o.Build = func(spec host.Spec) (*agent.Agent, error) {
			a, err := build(spec)
			if err != nil {
				return nil, err
			}
			id := spec.As.AgentID
			a.Hooks = agent.Hooks{
				SessionStart: func(context.Context, agent.SessionStart) (agent.SessionStartDecision, error) {
					note(id + " session_start")
					return agent.SessionStartDecision{}, nil
				},
				SessionEnd: func(_ context.Context, e agent.SessionEnd) error {
					note(id + " session_end " + e.Reason)
					return nil
				},
				SubagentStart: func(_ context.Context, e agent.SubagentStart) error {
					note(id + " subagent_start " + e.Agent + " " + e.Label + " " + e.Task)
					return nil
				},
				SubagentStop: func(_ context.Context, e agent.SubagentStop) error {
					note(id + " subagent_stop " + e.Agent + " " + e.Status + " " + e.Answer)
					return nil
				},
			}
			return a, nil
		}
	}, host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}}, host.Agent{ID: "worker", Model: "openai/worker"})
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{
		"lead session_start", "lead subagent_start worker counting count to 3", "worker session_start",
		"lead subagent_stop worker done 1 2 3", "lead session_end exit", "worker session_end exit",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("hooks ran: %q; missing %q", got, want)
		}
	}
	if i, j := slices.Index(got, "lead subagent_start worker counting count to 3"), slices.Index(got, "lead subagent_stop worker done 1 2 3"); i > j {
		t.Errorf("subagent_stop before subagent_start: %q", got)
	}
	if n := len(got); n != 6 {
		t.Errorf("%d hook runs, want 6: %q", n, got)
	}
}
