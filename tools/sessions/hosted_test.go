package sessions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// recordingHost is a session host that records what the tools ask of it.
type recordingHost struct {
	spawned []tool.SpawnRequest
	sent    []tool.SendRequest
	killed  []string
}

func (h *recordingHost) Spawn(_ context.Context, r tool.SpawnRequest) (tool.SpawnResult, error) {
	h.spawned = append(h.spawned, r)
	return tool.SpawnResult{Status: "accepted", ChildSessionKey: "agent:checker:subagent:1", RunID: "run-1", AgentID: r.AgentID}, nil
}
func (h *recordingHost) Children(context.Context, string) ([]tool.ChildInfo, error) {
	return []tool.ChildInfo{{Key: child2, AgentID: "checker", Status: "done", Answer: "ok"}}, nil
}
func (h *recordingHost) Steer(context.Context, string, string, string) error { return nil }
func (h *recordingHost) Kill(_ context.Context, _, child string) error {
	h.killed = append(h.killed, child)
	return nil
}
func (h *recordingHost) Send(_ context.Context, r tool.SendRequest) (tool.SendResult, error) {
	h.sent = append(h.sent, r)
	return tool.SendResult{Status: "ok", SessionKey: r.To, Reply: "pong"}, nil
}
func (h *recordingHost) Await(context.Context, string, string, time.Duration) (tool.SendResult, error) {
	return tool.SendResult{Status: "pending", Handle: "send-1"}, nil
}
func (h *recordingHost) Queue(string) tool.SessionQueue {
	return tool.SessionQueue{Running: true, PendingMessages: 2, RunningChildren: 1, ContextTokens: 250, ContextWindow: 1000}
}

func hostedRunner(t *testing.T, tc *tool.Context) *invoke.Runner {
	t.Helper()
	reg := registry.New()
	if err := sessions.RegisterReaders(reg); err != nil {
		t.Fatal(err)
	}
	if err := sessions.RegisterHosted(reg); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, tc)
}

// TestHostedToolsRefuse: without a host, outside a session, to a session
// the caller may not see, or with contradictory arguments, the tools
// refuse and say why.
func TestHostedToolsRefuse(t *testing.T) {
	t.Parallel()
	ss := sessionStore(t)
	h := &recordingHost{}
	noHost := hostedRunner(t, withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: writer1, Channel: "mcp"}}, testAgents, ss))
	noKey := hostedRunner(t, withHost(withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer"}}, testAgents, ss), h))
	r := hostedRunner(t, withHost(withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: writer1}}, testAgents, ss), h))
	for _, c := range []struct {
		r          *invoke.Runner
		name, args string
		want       string
	}{
		{noHost, "sessions_spawn", `{"task": "x"}`, `sessions_spawn needs a session host, which runs only inside an agent run (toolbelt run or toolbelt chat, with --agent ID): this caller (channel \"mcp\") has none.`},
		{noKey, "subagents", `{}`, "subagents needs a session: this call runs outside one"},
		{r, "subagents", `{"action": "kill"}`, "subagents kill needs sessionKey"},
		{r, "subagents", `{"action": "steer", "sessionKey": "k"}`, "subagents steer needs message"},
		{r, "sessions_send", `{"sessionKey": "` + other3 + `", "message": "hi"}`, `is not visible to agent \"writer\"`},
		{r, "sessions_send", `{"sessionKey": "agent:nope:x", "message": "hi"}`, `No session \"agent:nope:x\"`},
		{r, "sessions_send", `{"handle": "send-1", "message": "hi"}`, "Give either handle"},
		{r, "sessions_send", `{"message": "hi"}`, "sessions_send needs sessionKey and message"},
	} {
		res := call(t, c.r, c.name, c.args)
		if !res.IsError || !strings.Contains(res.Content[0].Text, c.want) {
			t.Errorf("%s %s: %v, want an error with %q", c.name, c.args, res.Content, c.want)
		}
	}
	if len(h.spawned)+len(h.sent)+len(h.killed) != 0 {
		t.Errorf("a refused call reached the host: %+v", h)
	}
}

// TestHostedToolsAsk: the tools hand the caller's session key and their
// arguments to the host and return what it answers; session_status adds
// the host's queue and the context use.
func TestHostedToolsAsk(t *testing.T) {
	t.Parallel()
	h := &recordingHost{}
	r := hostedRunner(t, withHost(withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: writer1}}, testAgents, sessionStore(t)), h))
	var spawned tool.SpawnResult
	decode(t, call(t, r, "sessions_spawn", `{"task": "check it", "agentId": "checker", "label": "c", "runTimeoutSeconds": 30}`), &spawned)
	if spawned.Status != "accepted" || len(h.spawned) != 1 || h.spawned[0] != (tool.SpawnRequest{ParentKey: writer1, Task: "check it", AgentID: "checker", Label: "c", Timeout: 30 * time.Second}) {
		t.Errorf("spawn: %+v, asked %+v", spawned, h.spawned)
	}
	var sent tool.SendResult
	decode(t, call(t, r, "sessions_send", `{"sessionKey": "`+child2+`", "message": "ping", "timeoutSeconds": 5}`), &sent)
	if sent.Reply != "pong" || len(h.sent) != 1 || h.sent[0] != (tool.SendRequest{From: writer1, To: child2, Message: "ping", Timeout: 5 * time.Second}) {
		t.Errorf("send: %+v, asked %+v", sent, h.sent)
	}
	var killed map[string]any
	decode(t, call(t, r, "subagents", `{"action": "kill", "sessionKey": "`+child2+`"}`), &killed)
	if killed["status"] != "aborted" || len(h.killed) != 1 || h.killed[0] != child2 {
		t.Errorf("kill: %v, asked %v", killed, h.killed)
	}
	var listed struct {
		Subagents []tool.ChildInfo `json:"subagents"`
	}
	decode(t, call(t, r, "subagents", `{}`), &listed)
	if len(listed.Subagents) != 1 || listed.Subagents[0].Answer != "ok" {
		t.Errorf("list: %+v", listed)
	}
	var status struct {
		Context map[string]any `json:"context"`
		Queue   map[string]any `json:"queue"`
	}
	decode(t, call(t, r, "session_status", `{}`), &status)
	if status.Context["usedTokens"] != 250.0 || status.Context["windowTokens"] != 1000.0 || status.Context["percentUsed"] != 25.0 ||
		status.Queue["pendingMessages"] != 2.0 || status.Queue["runningChildren"] != 1.0 {
		t.Errorf("session_status: %+v", status)
	}
}
