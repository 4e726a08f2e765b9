package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestChat drives toolbelt chat through its standard input: a turn that
// writes a file (shown on stderr as it runs, the answer streamed to
// stdout), /tools, /undo of that turn, a bad /model, and a second turn that
// carries the first in its request.
func TestChat(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Writing.", llmtest.Call{ID: "toolu_W", Name: "write", Args: `{"path":"b.txt","content":"hello"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "Done.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Still here.")})
	input := "write hello into b.txt\n/tools\n/undo\n/model nope/x\n/frobnicate\nare you there?\n/quit\n"
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", input, "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--yes").expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after /undo: %v", err)
	}
	// The /undo is in the audit, naming the write it undid and where.
	writes, undos := auditRecords(t, env, "--tool", "write"), auditRecords(t, env, "--tool", "undo")
	realWS, _ := filepath.EvalSymlinks(ws)
	if len(writes) != 1 || len(undos) != 1 {
		t.Fatalf("audit: %d writes, %d undos", len(writes), len(undos))
	}
	if u := undos[0]; string(u.Arguments) != fmt.Sprintf(`{"callId":%q}`, writes[0].CallID) || u.Workspace != realWS || u.IsError ||
		u.SessionKey != writes[0].SessionKey || u.Channel != writes[0].Channel {
		t.Errorf("undo record: args %s workspace %q error %v session %q channel %q; the write's session %q channel %q",
			u.Arguments, u.Workspace, u.IsError, u.SessionKey, u.Channel, writes[0].SessionKey, writes[0].Channel)
	}
	for _, want := range []string{"Writing.\n", "Done.\n", "read ", "Still here.\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"→ write {", "✓ write", `unknown provider "nope"`, "unknown command /frobnicate"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || !strings.Contains(compactJSON(t, reqs[2].Body), `"tool_use_id":"toolu_W"`) || !strings.Contains(string(reqs[2].Body), "are you there?") {
		t.Errorf("third request does not carry the conversation: %d requests", len(reqs))
	}
}

// TestChatSpawnsSubagents: in toolbelt chat as the lead agent, a turn
// spawns a checker; the turn ends only once the checker's answer came
// back to the lead and the lead answered it; the next line continues the
// same session, which the store keeps.
func TestChatSpawnsSubagents(t *testing.T) {
	t.Parallel()
	cfg, ws := subagentsConfig(t)
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("Asking a checker.", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Check fact A", "agentId": "checker", "label": "A"}`}),
			decide([]string{"The checker says: A is true.", "[sub-agent ", "A is true."}, []string{"Waiting for the checker."}),
			decide([]string{"The checker says: A is true.", "[sub-agent ", "A is true."}, []string{"Waiting for the checker."}),
			chat("Still here."),
		}},
		llmtest.Route{Match: "Check fact A", Responses: []llmtest.Response{chat("A is true.")}},
	)
	env := cliEnvironment(t)
	input := "check A\nare you there?\n/quit\n"
	r := runCLIWith(t, env, "", input, "--config", cfg, "chat", "--agent", "lead", "--workspace", ws, "--base-url", s.URL+"/v1").expect(t, 0)
	answer, next := strings.Index(r.stdout, "The checker says: A is true."), strings.Index(r.stdout, "Still here.")
	if answer < 0 || next < answer {
		t.Fatalf("the lead's answer to the checker does not come before the next turn's:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	key := regexp.MustCompile(`session (agent:lead:cli:[0-9a-f]+)`).FindStringSubmatch(r.stderr)
	if key == nil {
		t.Fatalf("chat did not name its session:\n%s", r.stderr)
	}
	sessions := sessionsOf(t, env, cfg)
	if _, ok := sessions[key[1]]; !ok {
		t.Errorf("the chat's session %s is not in the store: %v", key[1], sessions)
	}
	children := 0
	for _, sess := range sessions {
		if sess["parentKey"] == key[1] && sess["status"] == "done" {
			children++
		}
	}
	if children != 1 {
		t.Errorf("%d finished children of the chat's session, want 1: %v", children, sessions)
	}
	last := s.Requests()[len(s.Requests())-1]
	if !strings.Contains(string(last.Body), "are you there?") || !strings.Contains(string(last.Body), "The checker says") {
		t.Errorf("the last request does not carry the conversation:\n%s", last.Body)
	}
}
