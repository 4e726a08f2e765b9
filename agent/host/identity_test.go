package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// keep stores sessions as earlier runs left them.
func keep(t *testing.T, st *store.Store, sessions ...store.SessionStart) {
	t.Helper()
	for _, s := range sessions {
		if err := st.Sessions().Start(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if err := st.Sessions().Finish(context.Background(), s.ID, store.SessionDone, store.SessionUsage{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIdentity: who a session runs as when someone asks for work in it. A
// kept session runs as the identity recorded with it, never for someone
// with fewer rights nor as another agent; a session kept before identities
// were recorded takes the asker's, as a sub-agent when it has a parent; a
// sub-agent cannot start a new session.
func TestIdentity(t *testing.T) {
	t.Parallel()
	h, st := newHost(t, llmtest.New(t),
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}},
		host.Agent{ID: "worker", Model: "openai/worker"})
	lead := tool.Identity{AgentID: "lead", SessionKey: "agent:lead:main", Channel: "cli", Owner: true}
	sub := tool.Identity{AgentID: "worker", SessionKey: "agent:worker:subagent:1", Channel: "cli", Owner: true, Subagent: true}
	main := tool.Identity{AgentID: "worker", SessionKey: "agent:worker:main", Channel: "cli", Owner: true}
	keep(t, st,
		store.SessionStart{ID: lead.SessionKey, As: lead},
		store.SessionStart{ID: sub.SessionKey, ParentKey: lead.SessionKey, As: sub},
		store.SessionStart{ID: main.SessionKey, As: main})
	// Kept before identities were recorded: a sub-agent's row, and one of
	// no parent.
	if err := st.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO sessions (id, workspace, model, created_ns, updated_ns, agent_id, parent_key)
VALUES ('agent:worker:subagent:old', '/ws', 'm', 1, 1, 'worker', 'agent:lead:main'), ('agent:worker:old', '/ws', 'm', 1, 1, 'worker', '')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	person := tool.Identity{Channel: "cli", Owner: true}
	stranger := tool.Identity{Channel: "mcp", Principal: "bob"}
	with := func(id tool.Identity, agent, key string) tool.Identity {
		id.AgentID, id.SessionKey = agent, key
		return id
	}
	in := func(id tool.Identity, workspace string) tool.Identity {
		id.Workspace = workspace
		return id
	}
	for _, tt := range []struct {
		name, key string
		as        tool.Identity
		want      tool.Identity
		err       string
	}{
		{"a person resumes a sub-agent's session", sub.SessionKey, person, sub, ""},
		{"in the workspace of whoever asks", sub.SessionKey, tool.Identity{Channel: "cli", Owner: true, Workspace: "/w"}, in(sub, "/w"), ""},
		{"its own agent named", sub.SessionKey, with(person, "worker", ""), sub, ""},
		{"a sub-agent asks for its own session", sub.SessionKey, sub, sub, ""},
		{"as another agent", sub.SessionKey, with(person, "lead", ""), tool.Identity{}, `belongs to agent "worker" and runs only as it, not as agent "lead"`},
		{"a sub-agent asks for a main session", main.SessionKey, sub, tool.Identity{}, "(it runs without the sub-agent policy)"},
		{"a caller not the owner asks for the owner's", lead.SessionKey, stranger, tool.Identity{}, "(it runs as the owner)"},
		{"a sandboxed caller asks for one outside the sandbox", main.SessionKey, tool.Identity{Owner: true, Sandboxed: true}, tool.Identity{}, "(it runs outside the sandbox)"},
		{"a new session", "agent:lead:new", with(person, "lead", ""), with(person, "lead", "agent:lead:new"), ""},
		{"a new session for a caller not the owner", "agent:lead:new", with(stranger, "lead", ""), with(stranger, "lead", "agent:lead:new"), ""},
		{"a sub-agent starts a new session", "agent:worker:new", sub, tool.Identity{}, "a sub-agent cannot start one"},
		{"an old sub-agent's session", "agent:worker:subagent:old", person,
			tool.Identity{AgentID: "worker", SessionKey: "agent:worker:subagent:old", Channel: "cli", Owner: true, Subagent: true}, ""},
		{"an old session", "agent:worker:old", stranger, with(stranger, "worker", "agent:worker:old"), ""},
	} {
		got, err := h.Identity(context.Background(), tt.key, tt.as)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %+v, %v; want an error with %q", tt.name, got, err, tt.err)
		}
	}
}

// TestSubagentSendsWithinItsLimits: a sub-agent's sessions_send to a
// session this process runs without the sub-agent policy (its parent, whose
// agent its subagents.allow names) is refused with the reason; to another sub-agent's it is delivered. The
// sub-agents run as their parent, as sub-agents of their agents.
func TestSubagentSendsWithinItsLimits(t *testing.T) {
	t.Parallel()
	var toParent, toSibling string
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: `"content":"to the parent"`, Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "p1", Name: "sessions_send", Args: `{"sessionKey": "agent:lead:main", "message": "write for me"}`}),
			by(func(body string) llmtest.Response { toParent = body; return chat("Refused.") }),
		}},
		llmtest.Route{Match: `"content":"to a sibling: `, Responses: []llmtest.Response{
			by(func(body string) llmtest.Response {
				args := fmt.Sprintf(`{"sessionKey": %q, "message": "hello sibling"}`, workerKey.FindString(body))
				return chat("", llmtest.Call{ID: "q1", Name: "sessions_send", Args: args})
			}),
			by(func(body string) llmtest.Response { toSibling = body; return chat("Sent.") }),
		}},
		llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{chat("Hi."), chat("Hi."), chat("Hi.")}},
		llmtest.Route{Match: "You are lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "say hi", "agentId": "worker"}`}),
			chat("Waiting."),
			by(func(body string) llmtest.Response {
				return chat("", llmtest.Call{ID: "s2", Name: "sessions_spawn", Args: `{"task": "to the parent", "agentId": "worker"}`},
					llmtest.Call{ID: "s3", Name: "sessions_spawn", Args: `{"task": "to a sibling: ` + workerKey.FindString(body) + `", "agentId": "worker"}`})
			}),
			chat("Waiting."), chat("Waiting."), chat("Waiting."), chat("Waiting."),
		}},
	)
	h, st := newHost(t, s,
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}, MaxConcurrent: 4},
		host.Agent{ID: "worker", Model: "openai/worker", Allow: []string{"worker", "lead"}})
	if err := h.StartSession(context.Background(), host.Spec{Key: "agent:lead:main", As: tool.Identity{AgentID: "lead", Channel: "cli", Owner: true}, Model: "openai/lead"}, nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(toParent, `rights that whoever asked for this lacks (it runs without the sub-agent policy)`) {
		t.Errorf("the sub-agent's message to its parent was not refused:\n%s", toParent)
	}
	if !strings.Contains(toSibling, `\"status\": \"accepted\"`) {
		t.Errorf("the sub-agent's message to a sibling was not delivered:\n%s", toSibling)
	}
	children, err := st.Sessions().List(context.Background(), store.SessionFilter{ParentKey: "agent:lead:main"})
	if err != nil || len(children) != 3 {
		t.Fatalf("children: %v %+v", err, children)
	}
	for _, c := range children {
		if want := (tool.Identity{AgentID: "worker", SessionKey: c.ID, Channel: "cli", Owner: true, Subagent: true}); c.Identity == nil || *c.Identity != want {
			t.Errorf("child %s runs as %+v, want %+v", c.ID, c.Identity, want)
		}
	}
}

// TestDepthUnknownFailsClosed: when a session above a kept sub-agent's
// cannot be read, its depth below its ancestors is not known: it is not
// run, and no sub-agent is spawned below it.
func TestDepthUnknownFailsClosed(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You are worker.", Responses: []llmtest.Response{
		chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "deeper"}`}),
		chat("ok"), chat("ok"),
	}})
	h, st := newHost(t, s,
		host.Agent{ID: "lead", Model: "openai/lead", Allow: []string{"worker"}, MaxDepth: 1},
		host.Agent{ID: "worker", Model: "openai/worker", Allow: []string{"worker"}, MaxDepth: 5})
	child := "agent:worker:subagent:000000000001"
	keep(t, st,
		store.SessionStart{ID: "agent:lead:main", As: tool.Identity{AgentID: "lead", Owner: true}},
		store.SessionStart{ID: child, ParentKey: "agent:lead:main", As: tool.Identity{AgentID: "worker", Owner: true, Subagent: true}})
	// The lead's record no longer reads (a broken row).
	if err := st.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), "UPDATE sessions SET created_ns = 'broken' WHERE id = 'agent:lead:main'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err := h.StartSession(context.Background(), host.Spec{Key: child, As: tool.Identity{Owner: true}, Model: "openai/worker"}, nil, llm.UserText("go on"))
	if err == nil {
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	} else if !strings.Contains(err.Error(), "cannot be read, so how deep it is (subagents.maxDepth) is not known") {
		t.Errorf("the refusal does not say why: %v", err)
	}
	if below, err := st.Sessions().List(context.Background(), store.SessionFilter{ParentKey: child}); err != nil || len(below) != 0 {
		t.Errorf("a sub-agent was spawned below a session whose depth is not known: %v %+v", err, below)
	}
}
