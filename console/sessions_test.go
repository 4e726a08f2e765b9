package console_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolbelt/toolbelt/console"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// message encodes a transcript message as the agent loop stores it.
func message(t *testing.T, m llm.Message) store.SessionMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return store.SessionMessage{Role: m.Role, Body: b}
}

// keepSessions stores a main session that spawned two sub-agents, one of
// which spawned another, and the main session's transcript: a question,
// two tool calls (one answered with an error), and the answer.
func keepSessions(t *testing.T, ss *store.Sessions) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []store.SessionStart{
		{ID: "agent:main:main", Model: "anthropic/claude"},
		{ID: "sub:a", ParentKey: "agent:main:main", Label: "research"},
		{ID: "sub:b", ParentKey: "agent:main:main", Label: "write"},
		{ID: "sub:a:1", ParentKey: "sub:a", Label: "fetch"},
		{ID: "elsewhere"},
		{ID: "loop:a", ParentKey: "loop:b"}, // a broken record: each spawned the other
		{ID: "loop:b", ParentKey: "loop:a"},
	} {
		s.As = tool.Identity{AgentID: "main"}
		if err := ss.Start(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.Finish(ctx, "sub:b", store.SessionDone, store.SessionUsage{Input: 10, Output: 5}); err != nil {
		t.Fatal(err)
	}
	msgs := []store.SessionMessage{
		message(t, llm.UserText("what is in notes.txt?")),
		message(t, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockText, Text: "Let me look."},
			{Type: llm.BlockToolCall, ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"notes.txt"}`)},
			{Type: llm.BlockToolCall, ID: "c2", Name: "web_fetch", Arguments: json.RawMessage(`{"url":"https://example.com","apiKey":"sk-live-123"}`)},
		}}),
		message(t, llm.Message{Role: llm.RoleToolResult, ToolCallID: "c2", ToolName: "web_fetch", IsError: true, Content: []llm.Block{{Type: llm.BlockText, Text: "refused"}}}),
		message(t, llm.Message{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Block{{Type: llm.BlockText, Text: "buy milk"}}}),
		message(t, llm.Message{Role: llm.RoleToolResult, ToolCallID: "lost", ToolName: "exec", IsError: true, Content: []llm.Block{{Type: llm.BlockText, Text: "no call"}}}),
		message(t, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "It says: buy milk."}}}),
		{Role: "user", Body: json.RawMessage(`"not a message"`)},
	}
	if err := ss.Append(ctx, "agent:main:main", "", "anthropic/claude", msgs); err != nil {
		t.Fatal(err)
	}
}

func TestSessionTree(t *testing.T) {
	t.Parallel()
	tb := openRoot(t, pageYAML)
	ss := tb.Store().Sessions()
	keepSessions(t, ss)
	tree, err := console.SessionTree(context.Background(), ss, "agent:main:main")
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n console.SessionNode, depth int) []string
	walk = func(n console.SessionNode, depth int) []string {
		out := []string{string(rune('0'+depth)) + n.ID}
		for _, c := range n.Children {
			out = append(out, walk(c, depth+1)...)
		}
		return out
	}
	got := walk(tree, 0)
	want := []string{"0agent:main:main", "1sub:b", "1sub:a", "2sub:a:1"} // sub:b was updated last
	if len(got) != len(want) {
		t.Fatalf("tree %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tree %v, want %v", got, want)
		}
	}
	if tree.Children[0].Status != store.SessionDone || tree.Children[0].Usage.Input != 10 {
		t.Errorf("sub:b: %+v", tree.Children[0].SessionInfo)
	}
	loop, err := console.SessionTree(context.Background(), ss, "loop:a")
	if err != nil {
		t.Fatal(err)
	}
	if got := walk(loop, 0); len(got) != 2 || got[1] != "1loop:b" {
		t.Errorf("a loop of parents: %v, want loop:a with loop:b under it, once", got)
	}
	if _, err := console.SessionTree(context.Background(), ss, "nobody"); err == nil {
		t.Error("the tree of a session the store does not hold")
	}
}

func TestTranscriptFoldsToolResultsIntoTheirCalls(t *testing.T) {
	t.Parallel()
	tb := openRoot(t, pageYAML)
	ss := tb.Store().Sessions()
	keepSessions(t, ss)
	msgs, err := ss.Messages(context.Background(), "agent:main:main")
	if err != nil {
		t.Fatal(err)
	}
	turns := console.Transcript(msgs)
	if len(turns) != 5 {
		t.Fatalf("%d turns, want 5 (question, calls, lost result, answer, unreadable): %+v", len(turns), turns)
	}
	calls := turns[1].Calls
	if turns[1].Text != "Let me look." || len(calls) != 2 {
		t.Fatalf("the turn with the calls: %+v", turns[1])
	}
	if c := calls[0]; c.Name != "read" || !c.Answered || c.IsError || c.Result != "buy milk" {
		t.Errorf("read: %+v", c)
	}
	if c := calls[1]; !c.Answered || !c.IsError || c.Result != "refused" || c.Arguments != `{"apiKey":"[redacted]","url":"https://example.com"}` {
		t.Errorf("web_fetch (answered with an error, its key redacted): %+v", c)
	}
	if l := turns[2]; l.Role != llm.RoleToolResult || l.ToolName != "exec" || !l.IsError || l.Text != "no call" {
		t.Errorf("a result that answers no call stays a turn: %+v", l)
	}
	if a := turns[3]; a.Role != llm.RoleAssistant || a.Text != "It says: buy milk." {
		t.Errorf("the answer: %+v", a)
	}
	if u := turns[4]; u.Unreadable == "" || u.Text != `"not a message"` {
		t.Errorf("an unreadable message: %+v", u)
	}
}
