package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// subagentsConfig configures a lead agent that may spawn checkers (one
// level deep, two at once) and checkers that may spawn checkers.
func subagentsConfig(t *testing.T) (cfg, ws string) {
	t.Helper()
	return configBeside(t, func(string) string {
		return `model: openai/top-model
agents:
  lead:
    description: Leads.
    model: openai/lead-model
    system: You are the lead.
    subagents: {allow: [checker], maxDepth: 1, maxConcurrent: 2}
  checker:
    description: Checks facts.
    model: openai/checker-model
    system: You are a checker.
    subagents: {allow: [checker]}
`
	})
}

// configBeside makes an empty workspace ws and, beside it, a toolbelt.yaml
// cfg whose text is yaml(ws).
func configBeside(t *testing.T, yaml func(ws string) string) (cfg, ws string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte(yaml(ws)), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, ws
}

func chat(text string, calls ...llmtest.Call) llmtest.Response {
	return llmtest.Response{Body: llmtest.Chat("", text, calls...)}
}

// decide answers a request by what its body holds: the first rule whose
// every string the body contains.
func decide(rules ...[]string) llmtest.Response {
	return llmtest.Response{Check: func(body []byte) *llmtest.Response {
		for _, r := range rules {
			ok := true
			for _, want := range r[1:] {
				ok = ok && strings.Contains(string(body), want)
			}
			if ok {
				resp := chat(r[0])
				return &resp
			}
		}
		resp := chat("(unexpected request)")
		return &resp
	}}
}

// sessionsOf lists the store's sessions as toolbelt sessions --json does.
func sessionsOf(t *testing.T, env []string, cfg string) map[string]map[string]any {
	t.Helper()
	r := runCLIWith(t, env, "", "", "--config", cfg, "sessions", "--json").expect(t, 0)
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	out := map[string]map[string]any{}
	for _, s := range list {
		out[s["key"].(string)] = s
	}
	return out
}

var childKey = regexp.MustCompile(`agent:checker:subagent:[0-9a-f]{12}`)

// TestSpawnTwoSubagents: the lead spawns two checkers in one turn; both
// run, each answer comes back to the lead as a follow-up that names the
// sub-agent, and the run ends with the lead's answer once both are in.
func TestSpawnTwoSubagents(t *testing.T) {
	t.Parallel()
	cfg, ws := subagentsConfig(t)
	final := []string{"Final: A and B are true.", "A is true.", "B is true."}
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("Spawning two checkers.",
				llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Check fact A", "agentId": "checker", "label": "A"}`},
				llmtest.Call{ID: "s2", Name: "sessions_spawn", Args: `{"task": "Check fact B", "label": "B", "agentId": "checker"}`}),
			decide(final, []string{"Noted, waiting for the other.", "[sub-agent "}, []string{"Waiting for the checkers."}),
			decide(final, []string{"Noted, waiting for the other.", "[sub-agent "}, []string{"Waiting for the checkers."}),
			decide(final, []string{"Noted, waiting for the other.", "[sub-agent "}, []string{"Waiting for the checkers."}),
		}},
		llmtest.Route{Match: "Check fact A", Responses: []llmtest.Response{chat("A is true.")}},
		llmtest.Route{Match: "Check fact B", Responses: []llmtest.Response{chat("B is true.")}},
	)
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--session", "agent:lead:main", "--workspace", ws, "--base-url", s.URL+"/v1", "check A and B").expect(t, 0)
	if r.stdout != "Final: A and B are true.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	// stderr shows each sub-agent starting and finishing.
	for _, mark := range []string{"→ sub-agent %s started\n", "✓ sub-agent %s finished\n"} {
		if n := len(regexp.MustCompile(fmt.Sprintf(regexp.QuoteMeta(mark), childKey)).FindAllString(r.stderr, -1)); n != 2 {
			t.Errorf("%d lines %q on stderr, want 2:\n%s", n, mark, r.stderr)
		}
	}
	var children []string
	var sawFollowUp bool
	for _, req := range s.Requests() {
		body := string(req.Body)
		if strings.Contains(body, "You are the lead.") {
			if strings.Contains(body, `[sub-agent \"A\" (agent:checker:subagent:`) && strings.Contains(body, "A is true.") {
				sawFollowUp = true
			}
			continue
		}
		if !strings.Contains(body, "You are a checker.") || !strings.Contains(body, `"model":"checker-model"`) {
			t.Errorf("a sub-agent's request lacks the checker's system prompt or model: %s", body)
		}
		children = append(children, body)
	}
	if len(children) != 2 || !sawFollowUp {
		t.Fatalf("%d sub-agent requests; follow-up naming A seen: %v", len(children), sawFollowUp)
	}
	list := sessionsOf(t, env, cfg)
	n := 0
	for key, info := range list {
		if childKey.MatchString(key) {
			n++
			if info["parentKey"] != "agent:lead:main" || info["status"] != "done" || info["agentId"] != "checker" || info["model"] != "openai/checker-model" {
				t.Errorf("child %s: %v", key, info)
			}
		}
	}
	if n != 2 || list["agent:lead:main"]["status"] != "done" {
		t.Errorf("sessions: %v", list)
	}
}

// TestKillSubagent: a sub-agent whose model never answers is killed by its
// parent with subagents kill; it shows aborted, in subagents list and in
// the store, and its transcript ends with its task and the cut turn.
func TestKillSubagent(t *testing.T) {
	t.Parallel()
	cfg, ws := subagentsConfig(t)
	kill := llmtest.Response{Check: func(body []byte) *llmtest.Response {
		key := childKey.FindString(string(body))
		resp := chat("Stopping it.", llmtest.Call{ID: "k1", Name: "subagents", Args: fmt.Sprintf(`{"action": "kill", "sessionKey": %q}`, key)})
		return &resp
	}}
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Slow task", "agentId": "checker", "label": "slow"}`}),
			kill,
			chat("", llmtest.Call{ID: "l1", Name: "subagents", Args: `{"action": "list"}`}),
			chat("Stopped the slow one."),
		}},
		llmtest.Route{Match: "Slow task", Responses: []llmtest.Response{{Body: ": keep-alive\n\n", Stall: true}}},
	)
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--session", "agent:lead:k", "--workspace", ws, "--base-url", s.URL+"/v1", "start and stop").expect(t, 0)
	if r.stdout != "Stopped the slow one.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	var listed string
	for _, req := range s.Requests() {
		if body := string(req.Body); strings.Contains(body, `"tool_call_id":"l1"`) {
			listed = body
		}
	}
	if !strings.Contains(listed, `\"status\": \"aborted\"`) || !strings.Contains(listed, `\"label\": \"slow\"`) {
		t.Errorf("subagents list does not show the killed sub-agent aborted: %s", listed)
	}
	var key string
	for k, info := range sessionsOf(t, env, cfg) {
		if childKey.MatchString(k) {
			key = k
			if info["status"] != "aborted" {
				t.Errorf("child %s: %v", k, info)
			}
		}
	}
	if key == "" {
		t.Fatal("no child session in the store")
	}
	show := runCLIWith(t, env, "", "", "--config", cfg, "sessions", "show", key, "--json").expect(t, 0)
	var got struct {
		Transcript []map[string]any `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Transcript) == 0 || got.Transcript[0]["role"] != "user" {
		t.Fatalf("transcript %s", show.stdout)
	}
	for _, m := range got.Transcript[1:] {
		if m["role"] == "assistant" {
			content, _ := m["content"].([]any)
			for _, b := range content {
				if b.(map[string]any)["type"] == "toolCall" {
					t.Errorf("the cut turn holds a tool call without a result: %v", m)
				}
			}
		}
	}
}

// TestSpawnBeyondDepthRefused: a checker spawned by the lead (maxDepth 1)
// tries to spawn a checker of its own; the spawn is refused with the
// reason, the checker answers, and the lead gets its answer.
func TestSpawnBeyondDepthRefused(t *testing.T) {
	t.Parallel()
	cfg, ws := subagentsConfig(t)
	reason := `subagents.maxDepth of agent \\\"lead\\\" is 1`
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Nested task", "agentId": "checker"}`}),
			decide([]string{"The checker could not go deeper.", "I could not spawn"}, []string{"Waiting."}),
			decide([]string{"The checker could not go deeper.", "I could not spawn"}, []string{"Waiting."}),
		}},
		llmtest.Route{Match: "Nested task", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "d1", Name: "sessions_spawn", Args: `{"task": "Deeper task"}`}),
			decide([]string{"I could not spawn: refused for depth.", reason}, []string{"no refusal seen"}),
		}},
	)
	r := runCLIWith(t, cliEnvironment(t), "", "", "--config", cfg, "run", "--agent", "lead", "--session", "agent:lead:d", "--workspace", ws, "--base-url", s.URL+"/v1", "go deep").expect(t, 0)
	if r.stdout != "The checker could not go deeper.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	for _, req := range s.Requests() {
		if body := string(req.Body); strings.Contains(body, `"tool_call_id":"d1"`) && !strings.Contains(body, `a sub-agent of it would be 2 levels below session \\\"agent:lead:d\\\"`) {
			t.Errorf("the refusal does not say why: %s", body)
		}
	}
}

// TestSessionsSend: the lead sends to a checker's session that replies in
// time (the reply is the result) and to one that does not (a pending
// result with a handle); waiting again on the handle gets the late reply.
func TestSessionsSend(t *testing.T) {
	t.Parallel()
	cfg, ws := subagentsConfig(t)
	release := make(chan struct{})
	handle := regexp.MustCompile(`send-[0-9a-f]{12}`)
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("",
				llmtest.Call{ID: "q1", Name: "sessions_send", Args: `{"sessionKey": "agent:checker:quick", "message": "ping quick", "timeoutSeconds": 60}`},
				llmtest.Call{ID: "w1", Name: "sessions_send", Args: `{"sessionKey": "agent:checker:slow", "message": "ping slow", "timeoutSeconds": 1}`}),
			{Check: func(body []byte) *llmtest.Response {
				close(release) // the slow session may answer now
				resp := chat("", llmtest.Call{ID: "h1", Name: "sessions_send", Args: fmt.Sprintf(`{"handle": %q, "timeoutSeconds": 60}`, handle.FindString(string(body)))})
				return &resp
			}},
			chat("All replies are in."),
		}},
		llmtest.Route{Match: "ping quick", Responses: []llmtest.Response{chat("pong from quick")}},
		llmtest.Route{Match: "ping slow", Responses: []llmtest.Response{{Check: func([]byte) *llmtest.Response {
			<-release
			resp := chat("pong from slow")
			return &resp
		}}}},
		llmtest.Route{Match: "hello", Responses: []llmtest.Response{chat("hi"), chat("hi")}},
	)
	env := cliEnvironment(t)
	for _, key := range []string{"agent:checker:quick", "agent:checker:slow"} {
		runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "checker", "--session", key, "--workspace", ws, "--base-url", s.URL+"/v1", "hello").expect(t, 0)
	}
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--session", "agent:lead:s", "--workspace", ws, "--base-url", s.URL+"/v1", "ask them").expect(t, 0)
	if r.stdout != "All replies are in.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	var first, last string
	for _, req := range s.Requests() {
		body := string(req.Body)
		if strings.Contains(body, `"tool_call_id":"h1"`) {
			last = body
		} else if strings.Contains(body, `"tool_call_id":"w1"`) {
			first = body
		}
	}
	for _, want := range []string{`\"status\": \"ok\"`, `\"reply\": \"pong from quick\"`, `\"status\": \"pending\"`, `\"sessionKey\": \"agent:checker:slow\"`} {
		if !strings.Contains(first, want) {
			t.Errorf("the sends' results lack %s: %s", want, first)
		}
	}
	if !strings.Contains(last, `\"reply\": \"pong from slow\"`) {
		t.Errorf("waiting on the handle did not bring the late reply: %s", last)
	}
	list := sessionsOf(t, env, cfg)
	for _, key := range []string{"agent:checker:quick", "agent:checker:slow"} {
		if list[key]["status"] != "done" {
			t.Errorf("%s: %v", key, list[key])
		}
	}
}

// TestSubagentWorksInItsOwnWorkspace: a sub-agent configured with a
// workspace of its own writes there, through that workspace's file bridge,
// not in its parent's; both workspaces share the run's store, so the
// child's write can be undone from anywhere.
func TestSubagentWorksInItsOwnWorkspace(t *testing.T) {
	t.Parallel()
	cfg, ws := configBeside(t, func(string) string {
		return `model: openai/top-model
agents:
  lead:
    system: You are the lead.
    subagents: {allow: [scribe]}
  scribe:
    system: You are the scribe.
    workspace: scribe-ws
`
	})
	own := filepath.Join(filepath.Dir(cfg), "scribe-ws")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("Asking the scribe.", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Write the note", "agentId": "scribe"}`}),
			decide([]string{"Done: the scribe wrote it.", "[sub-agent "}, []string{"Waiting for the scribe."}),
			decide([]string{"Done: the scribe wrote it.", "[sub-agent "}, []string{"Waiting for the scribe."}),
		}},
		llmtest.Route{Match: "Write the note", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "w1", Name: "write", Args: `{"path": "note.txt", "content": "from the scribe\n"}`}),
			chat("Written."),
		}},
	)
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--yes", "--agent", "lead", "--workspace", ws, "--base-url", s.URL+"/v1", "have the note written").expect(t, 0)
	if b, err := os.ReadFile(filepath.Join(own, "note.txt")); err != nil || string(b) != "from the scribe\n" {
		t.Fatalf("the scribe's note in its workspace: %q, %v\nstderr %s", b, err, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "note.txt")); !os.IsNotExist(err) {
		t.Fatalf("the scribe wrote in the lead's workspace: %v", err)
	}
	a := runCLIWith(t, env, "", "", "--config", cfg, "audit", "--tool", "write", "--json").expect(t, 0)
	var records []struct {
		CallID string `json:"callId"`
	}
	if err := json.Unmarshal([]byte(a.stdout), &records); err != nil || len(records) != 1 {
		t.Fatalf("the write's audit record: %v\n%s", err, a.stdout)
	}
	runCLIWith(t, env, "", "", "--config", cfg, "undo", records[0].CallID).expect(t, 0)
	if _, err := os.Stat(filepath.Join(own, "note.txt")); !os.IsNotExist(err) {
		t.Fatalf("undo left the scribe's note: %v", err)
	}
}
