package host_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	agentlist "github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// newHost makes a host over a real SQLite store whose sessions talk to the
// replay server s; each agent's system prompt is "You are <id>.".
func newHost(t *testing.T, s *llmtest.Server, agents ...host.Agent) (*host.Host, *store.Store) {
	t.Helper()
	return newHostOver(t, s, func(ss host.Sessions) host.Sessions { return ss }, agents...)
}

// newHostOver is newHost with the host keeping its sessions in what wrap
// makes of the store's.
func newHostOver(t *testing.T, s *llmtest.Server, wrap func(host.Sessions) host.Sessions, agents ...host.Agent) (*host.Host, *store.Store) {
	t.Helper()
	return newHostWith(t, s, func(o *host.Options) { o.Sessions = wrap(o.Sessions) }, agents...)
}

// newHostWith is newHost with the host's options as set then changed by
// edit.
func newHostWith(t *testing.T, s *llmtest.Server, edit func(*host.Options), agents ...host.Agent) (*host.Host, *store.Store) {
	t.Helper()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	reg := registry.New()
	if err := sessions.RegisterReaders(reg); err != nil {
		t.Fatal(err)
	}
	if err := sessions.RegisterHosted(reg); err != nil {
		t.Fatal(err)
	}
	var infos []tool.AgentInfo
	for _, a := range agents {
		infos = append(infos, tool.AgentInfo{ID: a.ID, Name: a.ID, Model: a.Model, Spawns: a.Allow})
	}
	var h *host.Host
	o := host.Options{
		Sessions: st.Sessions(), Workspace: t.TempDir(), Agents: agents,
		ContextWindow: func(string) int { return 1000 },
		Build: func(spec host.Spec) (*agent.Agent, error) {
			c, err := llm.New(spec.Model, llm.Options{BaseURL: s.URL + "/v1", APIKey: "k"})
			if err != nil {
				return nil, err
			}
			tc := &tool.Context{}
			agentlist.ListService.Set(tc, infos)
			sessions.StoreService.Set(tc, st.Sessions().ForTools())
			sessions.HostService.Set(tc, h)
			tc.RunAs(spec.As)
			return &agent.Agent{Client: c, Runner: invoke.New(reg, tc), System: "You are " + spec.As.AgentID + "."}, nil
		},
	}
	edit(&o)
	h = host.New(o)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNow(t, h) })
	return h, st
}

// stopNow stops h, cancelling what still runs.
func stopNow(t *testing.T, h *host.Host) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v", err)
	}
}

func chat(text string, calls ...llmtest.Call) llmtest.Response {
	return llmtest.Response{Body: llmtest.Chat("", text, calls...)}
}

// by answers a request with what f makes of its body.
func by(f func(body string) llmtest.Response) llmtest.Response {
	return llmtest.Response{Check: func(b []byte) *llmtest.Response {
		r := f(string(b))
		return &r
	}}
}

var workerKey = regexp.MustCompile(`agent:worker:subagent:[0-9a-f]{12}`)

// TestConcurrencyStatusAndSteer: with maxConcurrent 1, the second of two
// spawns in one turn is refused with the reason; session_status shows the
// running child and the context use; the worker's answer comes back as a
// follow-up; steering the finished worker runs it again, and its second
// answer comes back too; Wait returns once every session is idle.
func TestConcurrencyStatusAndSteer(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	var statusBody, steerBody string
	var st *store.Store
	var runningHistory []store.SessionMessage
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{
			chat("",
				llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "job", "agentId": "worker", "label": "one"}`},
				llmtest.Call{ID: "s2", Name: "sessions_spawn", Args: `{"task": "job", "agentId": "worker", "label": "two"}`}),
			chat("", llmtest.Call{ID: "st", Name: "session_status", Args: `{}`}),
			by(func(body string) llmtest.Response {
				statusBody = body
				// The worker runs (blocked on the gate): its task is in
				// the store already.
				runningHistory, _ = st.Sessions().Messages(context.Background(), workerKey.FindString(body))
				close(gate)
				return chat("Waiting.")
			}),
			by(func(body string) llmtest.Response {
				return chat("", llmtest.Call{ID: "steer", Name: "subagents", Args: fmt.Sprintf(`{"action": "steer", "sessionKey": %q, "message": "do it again"}`, workerKey.FindString(body))})
			}),
			chat("Steered."),
			by(func(body string) llmtest.Response {
				if strings.Contains(body, "second answer") {
					return chat("Final.")
				}
				return chat("Still waiting.")
			}),
			by(func(body string) llmtest.Response {
				if strings.Contains(body, "second answer") {
					return chat("Final.")
				}
				return chat("Still waiting.")
			}),
		}},
		llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{
			by(func(string) llmtest.Response { <-gate; return chat("first answer") }),
			by(func(body string) llmtest.Response { steerBody = body; return chat("second answer") }),
		}},
	)
	h, st0 := newHost(t, s,
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}, MaxDepth: 1, MaxConcurrent: 1},
		host.Agent{ID: "worker", Model: "openai/worker"})
	st = st0
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	transcript, err := h.Result("agent:lead:main")
	if err != nil {
		t.Fatal(err)
	}
	if got := transcript[len(transcript)-1].Text(); got != "Final." {
		t.Fatalf("the lead's last answer is %q", got)
	}
	stored, err := st.Sessions().Messages(context.Background(), "agent:lead:main")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(transcript) {
		t.Errorf("the store holds %d messages of the lead, its transcript %d", len(stored), len(transcript))
	}
	for i, m := range stored {
		if m.Role != transcript[i].Role {
			t.Errorf("stored message %d is a %s, the transcript's a %s", i, m.Role, transcript[i].Role)
		}
	}
	reqs := s.Requests()
	var spawned string
	for _, r := range reqs {
		if b := string(r.Body); strings.Contains(b, `"tool_call_id":"s2"`) {
			spawned = b
			break
		}
	}
	if strings.Count(spawned, `\"status\": \"accepted\"`) != 1 || !strings.Contains(spawned, `the limit of agent \\\"lead\\\" (subagents.maxConcurrent 1)`) {
		t.Errorf("want one spawn accepted and one refused for the concurrency limit:\n%s", spawned)
	}
	for _, want := range []string{`\"runningChildren\": 1`, `\"windowTokens\": 1000`, `\"pendingMessages\": 0`} {
		if !strings.Contains(statusBody, want) {
			t.Errorf("session_status lacks %s:\n%s", want, statusBody)
		}
	}
	if strings.Contains(statusBody, `\"usedTokens\": 0`) {
		t.Errorf("session_status does not count the tokens of the last call:\n%s", statusBody)
	}
	if len(runningHistory) != 1 || !strings.Contains(string(runningHistory[0].Body), `"text":"job"`) {
		t.Errorf("the running worker's stored history: %+v", runningHistory)
	}
	if !strings.Contains(steerBody, "do it again") || !strings.Contains(steerBody, "first answer") {
		t.Errorf("the steered worker's request lacks its history or the message:\n%s", steerBody)
	}
	list, err := st.Sessions().List(context.Background(), store.SessionFilter{ParentKey: "agent:lead:main"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Status != store.SessionDone || list[0].AgentID != "worker" || list[0].Model != "openai/worker" {
		t.Errorf("children: %+v", list)
	}
	if q := h.Queue("agent:lead:main"); q.Running || q.RunningChildren != 0 || q.PendingMessages != 0 {
		t.Errorf("queue after Wait: %+v", q)
	}
}

// TestSubagentEndIsTold: once a sub-agent's run has ended, its key is
// given to SubagentEnded (what the program keeps for it, its browser, may
// go); the lead's own runs end untold.
func TestSubagentEndIsTold(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "job", "agentId": "worker"}`}),
			chat("Spawned."),
			chat("Done."),
		}},
		llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{chat("the answer")}},
	)
	var mu sync.Mutex
	var ended []string
	h, _ := newHostWith(t, s, func(o *host.Options) {
		o.SubagentEnded = func(key string) {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, key)
		}
	}, host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}}, host.Agent{ID: "worker", Model: "openai/worker"})
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 1 || !workerKey.MatchString(ended[0]) {
		t.Errorf("the sessions told as ended: %q, want the worker's alone", ended)
	}
}

// TestRefusals: spawning an agent the caller's allow list does not name,
// from a session the host does not run, or an unknown agent is refused
// with the reason; killing and steering a session that is not one's child
// too.
func TestRefusals(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{chat("ok")}})
	h, st := newHost(t, s,
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}},
		host.Agent{ID: "worker", Model: "openai/worker"},
		host.Agent{ID: "other", Model: "openai/other"})
	// A session another process runs.
	if err := st.Sessions().Start(context.Background(), store.SessionStart{ID: "agent:worker:busy", As: tool.Identity{AgentID: "worker", Owner: true}, Model: "openai/worker"}); err != nil {
		t.Fatal(err)
	}
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		req  tool.SpawnRequest
		want string
	}{
		{tool.SpawnRequest{ParentKey: "agent:lead:main", Task: "x", AgentID: "other"}, `Agent "lead" may not spawn agent "other": its subagents.allow names worker.`},
		{tool.SpawnRequest{ParentKey: "agent:lead:main", Task: "x", AgentID: "nope"}, `No agent "nope" is configured`},
		{tool.SpawnRequest{ParentKey: "agent:x:main", Task: "x", AgentID: "worker"}, `session "agent:x:main" is not run by this process`},
		{tool.SpawnRequest{Task: "x", AgentID: "worker"}, "needs a session"},
	} {
		_, err := h.Spawn(ctx, c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Spawn(%+v) = %v, want %q", c.req, err, c.want)
		}
	}
	if err := h.Kill(ctx, "agent:lead:main", "agent:other:main"); err == nil || !strings.Contains(err.Error(), "is not a sub-agent of your session") {
		t.Errorf("Kill of a stranger: %v", err)
	}
	if err := h.Steer(ctx, "agent:lead:main", "agent:lead:main", "x"); err == nil || !strings.Contains(err.Error(), "is not a sub-agent of your session") {
		t.Errorf("Steer of oneself: %v", err)
	}
	if _, err := h.Send(ctx, tool.SendRequest{From: "agent:lead:main", To: "agent:lead:main", Message: "x"}); err == nil || !strings.Contains(err.Error(), "your own session") {
		t.Errorf("Send to oneself: %v", err)
	}
	if _, err := h.Send(ctx, tool.SendRequest{From: "agent:lead:main", To: "agent:worker:busy", Message: "x"}); err == nil || !strings.Contains(err.Error(), "is running in another process") {
		t.Errorf("Send to a session another process runs: %v", err)
	}
	if _, err := h.Await(ctx, "agent:lead:main", "send-nope", 0); err == nil || !strings.Contains(err.Error(), "No pending reply") {
		t.Errorf("Await of an unknown handle: %v", err)
	}
}

// TestResumedSubagentKeepsDepth: a kept sub-agent's session started on its
// own (toolbelt run --session KEY) is still below its parent, so the
// parent agent's maxDepth refuses a spawn from it.
func TestResumedSubagentKeepsDepth(t *testing.T) {
	t.Parallel()
	var refusal string
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{
		chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "deeper"}`}),
		by(func(body string) llmtest.Response { refusal = body; return chat("ok") }),
	}})
	h, st := newHost(t, s,
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}, MaxDepth: 1},
		host.Agent{ID: "worker", Model: "openai/worker", Allow: []string{"worker"}})
	ctx := context.Background()
	for _, ss := range []store.SessionStart{
		{ID: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"},
		{ID: "agent:worker:subagent:000000000001", As: tool.Identity{AgentID: "worker", Owner: true, Subagent: true}, Model: "openai/worker", ParentKey: "agent:lead:main"},
	} {
		if err := st.Sessions().Start(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:worker:subagent:000000000001", As: tool.Identity{AgentID: "worker", Owner: true}, Model: "openai/worker"}, nil, llm.UserText("go on")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refusal, `subagents.maxDepth of agent \\\"lead\\\" is 1`) {
		t.Errorf("the spawn was not refused for the lead's depth limit:\n%s", refusal)
	}
}

// TestRunTimeout: a sub-agent past its runTimeoutSeconds is stopped and
// reported to its parent as failed, with the reason.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	var report string
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "hang", "agentId": "worker", "runTimeoutSeconds": 1}`}),
			chat("Waiting."),
			by(func(body string) llmtest.Response { report = body; return chat("It timed out.") }),
		}},
		llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{{Body: ": waiting\n\n", Stall: true}}},
	)
	h, st := newHost(t, s,
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}},
		host.Agent{ID: "worker", Model: "openai/worker"})
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, "failed: the run timed out after 1s (runTimeoutSeconds)") {
		t.Errorf("the lead was not told of the timeout:\n%s", report)
	}
	list, err := st.Sessions().List(context.Background(), store.SessionFilter{ParentKey: "agent:lead:main"})
	if err != nil || len(list) != 1 || list[0].Status != store.SessionFailed {
		t.Errorf("children: %+v, %v", list, err)
	}
}
