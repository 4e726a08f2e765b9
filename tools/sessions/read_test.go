package sessions_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

var testAgents = []tool.AgentInfo{
	{ID: "writer", Name: "Writer", Description: "Writes.", Model: "openai/w", Spawns: []string{"checker"}},
	{ID: "checker", Name: "checker", Description: "Checks.", Model: "openai/c"},
	{ID: "other", Name: "other", Description: "Other work.", Model: "openai/o"},
}

const (
	writer1  = "agent:writer:cli:1"
	child2   = "agent:checker:cli:2"
	other3   = "agent:other:cli:3"
	checker4 = "agent:checker:cli:4"
	writer5  = "agent:writer:cli:5"
)

// withServices makes tc carry the configured agents list and the session
// store ss (none when nil).
func withServices(tc *tool.Context, list []tool.AgentInfo, ss sessions.Store) *tool.Context {
	agents.ListService.Set(tc, list)
	if ss != nil {
		sessions.StoreService.Set(tc, ss)
	}
	return tc
}

// sessionStore opens a real SQLite store holding five sessions: writer's
// session 1 (a transcript with a tool call and a long result), its
// sub-agent's session 2, a session of an agent writer may not target (3), a
// failed session of checker (4) and another session of writer (5).
// withHost makes tc carry the session host h.
func withHost(tc *tool.Context, h sessions.Host) *tool.Context {
	sessions.HostService.Set(tc, h)
	return tc
}

func sessionStore(t *testing.T) sessions.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ss := st.Sessions()
	for _, s := range []struct{ key, agent, parent, status string }{
		{writer5, "writer", "", store.SessionDone},
		{other3, "other", "", store.SessionDone},
		{checker4, "checker", "", store.SessionFailed},
		{child2, "checker", writer1, store.SessionDone},
		{writer1, "writer", "", store.SessionDone},
	} {
		if err := ss.Start(ctx, store.SessionStart{ID: s.key, Workspace: "/ws", Model: "openai/m", As: tool.Identity{AgentID: s.agent}, ParentKey: s.parent}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Finish(ctx, s.key, s.status, store.SessionUsage{Input: 10, Output: 5}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", 1200)
	msgs := []store.SessionMessage{
		{Role: "user", Body: json.RawMessage(`{"role":"user","content":[{"type":"text","text":"count the files"}]}`)},
		{Role: "assistant", Body: json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Listing."},{"type":"toolCall","id":"t1","name":"ls","arguments":{"path":"."}}]}`)},
		{Role: "toolResult", Body: json.RawMessage(`{"role":"toolResult","toolCallId":"t1","toolName":"ls","content":[{"type":"text","text":"` + long + `"}]}`)},
		{Role: "assistant", Body: json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"There are 3 files."}]}`)},
	}
	if err := ss.Append(ctx, writer1, "/ws", "openai/m", msgs); err != nil {
		t.Fatal(err)
	}
	return ss.ForTools()
}

func runner(t *testing.T, tc *tool.Context) *invoke.Runner {
	t.Helper()
	reg := registry.New()
	if err := sessions.RegisterReaders(reg); err != nil {
		t.Fatal(err)
	}
	if err := agents.Register(reg); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, tc)
}

func call(t *testing.T, r *invoke.Runner, name, args string) tool.ResultMessage {
	t.Helper()
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

// decode reads a successful call's details into v.
func decode(t *testing.T, msg tool.ResultMessage, v any) {
	t.Helper()
	if msg.IsError {
		t.Fatalf("error result: %s", msg.Content[0].Text)
	}
	b, _ := json.Marshal(msg.Details)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func keysOf(t *testing.T, msg tool.ResultMessage) []string {
	t.Helper()
	var d struct {
		Count    int
		Sessions []struct {
			Key, AgentID, ParentKey, Status, Model, UpdatedAt string
			Messages                                          int
		}
	}
	decode(t, msg, &d)
	var keys []string
	for _, s := range d.Sessions {
		keys = append(keys, s.Key)
		if s.UpdatedAt == "" || s.Status == "" || s.Model != "openai/m" || s.AgentID == "" {
			t.Errorf("row %+v", s)
		}
	}
	if d.Count != len(keys) {
		t.Errorf("count %d for %d rows", d.Count, len(keys))
	}
	return keys
}

func errorText(t *testing.T, msg tool.ResultMessage) string {
	t.Helper()
	if !msg.IsError {
		t.Fatalf("want an error, got %+v", msg)
	}
	// A tool's error comes as an envelope; the pipeline's own as text.
	var env struct{ Error string }
	if json.Unmarshal([]byte(msg.Content[0].Text), &env) == nil {
		return env.Error
	}
	return msg.Content[0].Text
}

func TestReadersUnavailableWithoutAgents(t *testing.T) {
	t.Parallel()
	r := runner(t, withServices(&tool.Context{}, nil, sessionStore(t)))
	for _, name := range []string{"sessions_list", "sessions_history", "session_status", "agents_list"} {
		if text := errorText(t, call(t, r, name, `{"sessionKey":"x"}`)); !strings.Contains(text, "no agents configured") {
			t.Errorf("%s: %s", name, text)
		}
	}
	r = runner(t, withServices(&tool.Context{}, testAgents, nil))
	if text := errorText(t, call(t, r, "sessions_list", `{}`)); !strings.Contains(text, "no session store") {
		t.Errorf("%s", text)
	}
}

func TestSessionsListVisibilityAndFilters(t *testing.T) {
	t.Parallel()
	ss := sessionStore(t)
	w := runner(t, withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: writer1}}, testAgents, ss))
	// Writer sees its own session, its child, and checker's sessions; not
	// other's, nor its own agent's other session.
	if got := keysOf(t, call(t, w, "sessions_list", `{}`)); !slices.Equal(got, []string{writer1, child2, checker4}) {
		t.Errorf("visible: %v", got)
	}
	if got := keysOf(t, call(t, w, "sessions_list", `{"status":"failed"}`)); !slices.Equal(got, []string{checker4}) {
		t.Errorf("status failed: %v", got)
	}
	if got := keysOf(t, call(t, w, "sessions_list", `{"agentId":"checker","limit":1}`)); !slices.Equal(got, []string{child2}) {
		t.Errorf("checker, limit 1: %v", got)
	}
	if got := keysOf(t, call(t, w, "sessions_list", `{"agentId":"other"}`)); len(got) != 0 {
		t.Errorf("other's sessions are not visible: %v", got)
	}
	if got := keysOf(t, call(t, w, "sessions_list", `{"activeSince":"1h"}`)); len(got) != 3 {
		t.Errorf("active within the hour: %v", got)
	}
	if got := keysOf(t, call(t, w, "sessions_list", `{"activeSince":"1d","limit":2}`)); len(got) != 2 {
		t.Errorf("1d, limit 2: %v", got)
	}
	if text := errorText(t, call(t, w, "sessions_list", `{"activeSince":"soon"}`)); !strings.Contains(text, `activeSince "soon" is not a positive duration`) {
		t.Errorf("%s", text)
	}
	if text := errorText(t, call(t, w, "sessions_list", `{"limit":101}`)); !strings.Contains(text, "limit: maximum: got 101, want at most 100") {
		t.Errorf("%s", text)
	}
	// Called as no agent by the owner (a person at the terminal), every
	// session shows.
	all := runner(t, withServices(&tool.Context{Identity: tool.Identity{Owner: true}}, testAgents, ss))
	if got := keysOf(t, call(t, all, "sessions_list", `{}`)); !slices.Equal(got, []string{writer1, child2, checker4, other3, writer5}) {
		t.Errorf("all: %v", got)
	}
	// As no agent but not the owner (an MCP client), only its own session
	// and its children: here none of them.
	client := runner(t, withServices(&tool.Context{Identity: tool.Identity{SessionKey: "stdio-abc"}}, testAgents, ss))
	if got := keysOf(t, call(t, client, "sessions_list", `{}`)); len(got) != 0 {
		t.Errorf("a client that is not the owner sees %v", got)
	}
	if text := errorText(t, call(t, client, "sessions_history", `{"sessionKey":"`+writer1+`"}`)); !strings.Contains(text, "not visible to this caller") {
		t.Errorf("%s", text)
	}
}

type history struct {
	SessionKey string
	Total      int
	Offset     int
	NextOffset *int
	Messages   []struct {
		Seq       int64
		Role      string
		Text      string
		ToolName  string
		ToolCalls []struct {
			Name      string
			Arguments json.RawMessage
		}
	}
}

func TestSessionsHistory(t *testing.T) {
	t.Parallel()
	ss := sessionStore(t)
	w := runner(t, withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: writer1}}, testAgents, ss))

	var h history
	decode(t, call(t, w, "sessions_history", `{"sessionKey":"`+writer1+`"}`), &h)
	if h.Total != 3 || len(h.Messages) != 3 || h.NextOffset != nil || h.Messages[1].Text != "Listing." || h.Messages[1].ToolCalls != nil || h.Messages[2].Text != "There are 3 files." {
		t.Fatalf("without tool calls: %+v", h)
	}

	h = history{}
	decode(t, call(t, w, "sessions_history", `{"sessionKey":"`+writer1+`","includeToolCalls":true}`), &h)
	if h.Total != 4 || len(h.Messages[1].ToolCalls) != 1 || h.Messages[1].ToolCalls[0].Name != "ls" || string(h.Messages[1].ToolCalls[0].Arguments) != `{"path":"."}` {
		t.Fatalf("with tool calls: %+v", h)
	}
	res := h.Messages[2]
	if res.Role != "toolResult" || res.ToolName != "ls" || res.Text != strings.Repeat("x", sessions.ToolResultChars)+"…" {
		t.Errorf("tool result not shortened: %s %s %d chars", res.Role, res.ToolName, len(res.Text))
	}

	h = history{}
	decode(t, call(t, w, "sessions_history", `{"sessionKey":"`+writer1+`","includeToolCalls":true,"offset":1,"limit":2}`), &h)
	if len(h.Messages) != 2 || h.Messages[0].Seq != 2 || h.NextOffset == nil || *h.NextOffset != 3 {
		t.Errorf("page: %+v", h)
	}
	h = history{}
	decode(t, call(t, w, "sessions_history", `{"sessionKey":"`+writer1+`","offset":10}`), &h)
	if len(h.Messages) != 0 || h.Total != 3 {
		t.Errorf("past the end: %+v", h)
	}

	// Its child and a targetable agent's session are readable (and empty).
	for _, key := range []string{child2, checker4} {
		h = history{}
		decode(t, call(t, w, "sessions_history", `{"sessionKey":"`+key+`"}`), &h)
		if h.SessionKey != key || h.Total != 0 {
			t.Errorf("%s: %+v", key, h)
		}
	}
	// Refusals say why.
	for _, key := range []string{other3, writer5} {
		text := errorText(t, call(t, w, "sessions_history", `{"sessionKey":"`+key+`"}`))
		if !strings.Contains(text, `session "`+key+`" is not visible to agent "writer"`) || !strings.Contains(text, "subagents.allow names (checker)") {
			t.Errorf("%s: %s", key, text)
		}
	}
	if text := errorText(t, call(t, w, "sessions_history", `{"sessionKey":"agent:nobody:main"}`)); !strings.Contains(text, `No session "agent:nobody:main"`) {
		t.Errorf("%s", text)
	}
}

func TestSessionStatus(t *testing.T) {
	t.Parallel()
	ss := sessionStore(t)
	var st struct {
		Key, AgentID, Status, Model, CreatedAt, UpdatedAt string
		Messages                                          int
		Usage                                             struct{ Input, Output int64 }
	}
	decode(t, call(t, runner(t, withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: writer1}}, testAgents, ss)), "session_status", `{}`), &st)
	if st.Key != writer1 || st.AgentID != "writer" || st.Status != "done" || st.Model != "openai/m" || st.Messages != 4 || st.Usage.Input != 10 || st.Usage.Output != 5 || st.CreatedAt == "" || st.UpdatedAt == "" {
		t.Errorf("%+v", st)
	}
	if text := errorText(t, call(t, runner(t, withServices(&tool.Context{}, testAgents, ss)), "session_status", `{}`)); !strings.Contains(text, "outside a session") {
		t.Errorf("%s", text)
	}
	if text := errorText(t, call(t, runner(t, withServices(&tool.Context{Identity: tool.Identity{SessionKey: "agent:writer:cli:new"}}, testAgents, ss)), "session_status", `{}`)); !strings.Contains(text, "not in the store yet") {
		t.Errorf("%s", text)
	}
}

func TestAgentsList(t *testing.T) {
	t.Parallel()
	list := func(tc *tool.Context) (ids []string, note string) {
		var d struct {
			Agents []agents.Row
			Note   string
		}
		decode(t, call(t, runner(t, tc), "agents_list", `{}`), &d)
		for _, a := range d.Agents {
			ids = append(ids, a.ID)
		}
		return ids, d.Note
	}
	ids, _ := list(withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer"}}, testAgents, nil))
	if !slices.Equal(ids, []string{"checker"}) {
		t.Errorf("writer may target: %v", ids)
	}
	if ids, _ := list(withServices(&tool.Context{}, testAgents, nil)); !slices.Equal(ids, []string{"checker", "other", "writer"}) {
		t.Errorf("without an agent: %v", ids)
	}
	if ids, note := list(withServices(&tool.Context{Identity: tool.Identity{AgentID: "checker"}}, testAgents, nil)); len(ids) != 0 || !strings.Contains(note, "subagents.allow names none") {
		t.Errorf("checker: %v %q", ids, note)
	}
	star := append([]tool.AgentInfo{}, testAgents...)
	star[1].Spawns = []string{"*"}
	if ids, _ := list(withServices(&tool.Context{Identity: tool.Identity{AgentID: "checker"}}, star, nil)); len(ids) != 3 {
		t.Errorf("allow *: %v", ids)
	}
	var d struct{ Agents []agents.Row }
	decode(t, call(t, runner(t, withServices(&tool.Context{Identity: tool.Identity{AgentID: "writer"}}, testAgents, nil)), "agents_list", `{}`), &d)
	if a := d.Agents[0]; a.Name != "checker" || a.Description != "Checks." || a.Model != "openai/c" {
		t.Errorf("%+v", a)
	}
}
