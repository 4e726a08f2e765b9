package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tool"
)

// limitsConfig writes a configuration whose sub-agents may not write
// (subagents.tools), with a lead that may spawn checkers, both working in
// ws, and their models served by the replay server s; extra is added to it.
func limitsConfig(t *testing.T, s *llmtest.Server, extra string) (cfg, ws string) {
	t.Helper()
	return configBeside(t, func(ws string) string {
		return fmt.Sprintf(`model: replay/top-model
workspace: %[1]s
providers:
  replay:
    base: openai
    url: %[2]s/v1
subagents:
  tools: {deny: [write]}
agents:
  lead:
    system: You are the lead.
    workspace: %[1]s
    subagents: {allow: [checker]}
  checker:
    system: You are a checker.
    workspace: %[1]s
    subagents: {allow: [checker]}
%[3]s`, ws, s.URL, extra)
	})
}

// absent fails the test when the workspace holds a file the sub-agent's
// limits forbade it to write.
func absent(t *testing.T, ws string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(ws, name)); err == nil {
			t.Errorf("%s was written: a sub-agent refused write wrote it", name)
		}
	}
}

// schedulesOf lists the workspace's schedules.
func schedulesOf(t *testing.T, env []string, cfg, ws string) []tool.Schedule {
	t.Helper()
	r := runCLIWith(t, env, "", "", "--config", cfg, "cron", "list", "--json", "--workspace", ws).expect(t, 0)
	var list []tool.Schedule
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	return list
}

// runToolSchedules runs every tool-call schedule of the workspace now: a
// schedule a sub-agent managed to add must not write either.
func runToolSchedules(t *testing.T, env []string, cfg, ws string) {
	t.Helper()
	for _, s := range schedulesOf(t, env, cfg, ws) {
		if !s.Payload.IsMessage() {
			runCLIWith(t, env, "", "", "--config", cfg, "cron", "run", s.ID, "--workspace", ws)
		}
	}
}

// resultOf returns what the model was told of its call id (the tool
// message answering it, in an OpenAI chat request), or "" when no request
// to s holds it.
func resultOf(t *testing.T, s *llmtest.Server, id string) string {
	t.Helper()
	for _, req := range s.Requests() {
		var body struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    string `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Fatalf("a request to the model: %v", err)
		}
		for _, m := range body.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Content
			}
		}
	}
	return ""
}

// subagentDenied is how the pipeline tells the model that the sub-agent
// policy layer refused write.
const subagentDenied = `Tool write is not allowed here (subagent: `

// TestAttackSubagentScheduleKeepsLimits: a sub-agent refused write by
// subagents.tools schedules a message to itself. Delivered by toolbelt cron
// run and by toolbelt serve's scheduler, the message runs the sub-agent's
// session with its limits: write is refused, and so is a tool-call schedule
// that would run outside them.
func TestAttackSubagentScheduleKeepsLimits(t *testing.T) {
	t.Parallel()
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Set yourself a reminder.", "agentId": "checker"}`}),
			decide([]string{"Done.", "[sub-agent "}, []string{"Waiting."}),
			decide([]string{"Done.", "[sub-agent "}, []string{"Waiting."}),
		}},
		llmtest.Route{Match: "You are a checker.", Responses: []llmtest.Response{
			// The spawned run: a reminder to itself.
			chat("", llmtest.Call{ID: "c1", Name: "cron", Args: `{"action": "add", "every": "1h", "message": "Time to wake up."}`}),
			chat("Scheduled."),
			// Woken by toolbelt cron run.
			chat("",
				llmtest.Call{ID: "w1", Name: "write", Args: `{"path": "pwned-by-cron-run.txt", "content": "x"}`},
				llmtest.Call{ID: "w2", Name: "cron", Args: `{"action": "add", "every": "1h", "tool": "write", "arguments": {"path": "pwned-by-schedule.txt", "content": "x"}}`}),
			chat("Woke."),
			// Woken by toolbelt serve.
			chat("", llmtest.Call{ID: "w3", Name: "write", Args: `{"path": "pwned-by-serve.txt", "content": "x"}`}),
			chat("Woke again."),
		}},
	)
	cfg, ws := limitsConfig(t, s, "")
	env := cliEnvironment(t)
	cli := configuredCLI(t, env, cfg)
	r := cli(0, "run", "--agent", "lead", "--session", "agent:lead:main", "delegate a reminder")
	if r.stdout != "Done.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	list := schedulesOf(t, env, cfg, ws)
	if len(list) != 1 || !list[0].Payload.IsMessage() || !childKey.MatchString(list[0].Payload.SessionKey) {
		t.Fatalf("the sub-agent's reminder to itself: %+v", list)
	}
	id := list[0].ID

	cli(0, "cron", "run", id, "--workspace", ws)
	if got := resultOf(t, s, "w1"); !strings.Contains(got, subagentDenied) {
		t.Errorf("the run toolbelt cron run delivered was not refused write by the sub-agent policy: %s", got)
	}
	if got := resultOf(t, s, "w2"); !strings.Contains(got, "cannot schedule tool calls") {
		t.Errorf("the woken sub-agent could schedule a tool call: %s", got)
	}
	runToolSchedules(t, env, cfg, ws)
	absent(t, ws, "pwned-by-cron-run.txt", "pwned-by-schedule.txt")

	// Make the reminder due in a moment, as a person would, and let
	// toolbelt serve deliver it.
	at := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	cli(0, "call", "cron", "--workspace", ws, "--args", fmt.Sprintf(`{"action": "update", "id": %q, "at": %q}`, id, at))
	_, cmd, stderr := startServe(t, env, "--config", cfg, "--workspace", ws)
	var served *tool.ScheduleRun
	for deadline := time.Now().Add(60 * time.Second); served == nil && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		var runs []tool.ScheduleRun
		if err := json.Unmarshal([]byte(cli(0, "cron", "runs", id, "--json", "--workspace", ws).stdout), &runs); err != nil {
			t.Fatal(err)
		}
		for i := range runs {
			if runs[i].Trigger != tool.TriggerManual && runs[i].Status != tool.RunRunning {
				served = &runs[i]
			}
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if served == nil {
		t.Fatalf("toolbelt serve did not deliver the reminder; its stderr: %s", stderr.String())
	}
	if got := resultOf(t, s, "w3"); !strings.Contains(got, subagentDenied) {
		t.Errorf("the run toolbelt serve delivered was not refused write by the sub-agent policy (run %+v): %s", *served, got)
	}
	absent(t, ws, "pwned-by-serve.txt")
}

// rule answers a request whose last message holds key with reply(body).
type rule struct {
	key   string
	reply func(body string) llmtest.Response
}

func says(text string, calls ...llmtest.Call) func(string) llmtest.Response {
	return func(string) llmtest.Response { return chat(text, calls...) }
}

// replay starts a model server for several sessions at once, in whatever
// order they ask: a request whose last message is a tool result gets
// "Done."; any other gets the reply of the first rule whose key its last
// message holds.
func replay(t *testing.T, rules ...rule) *llmtest.Server {
	t.Helper()
	answer := llmtest.Response{Check: func(b []byte) *llmtest.Response {
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		resp := chat("(no rule for this request)")
		if json.Unmarshal(b, &body) != nil || len(body.Messages) == 0 {
			return &resp
		}
		last := body.Messages[len(body.Messages)-1]
		if last.Role == "tool" {
			resp = chat("Done.")
			return &resp
		}
		for _, r := range rules {
			if strings.Contains(string(last.Content), r.key) {
				resp = r.reply(string(b))
				break
			}
		}
		return &resp
	}}
	responses := make([]llmtest.Response, 50)
	for i := range responses {
		responses[i] = answer
	}
	return llmtest.New(t, responses...)
}

// TestAttackSubagentReachesOtherSessions: a sub-agent refused write cannot
// get a session that runs without its limits to write for it — not by
// sessions_send to its agent's main session, nor by a scheduled message to
// that session or to a new one.
func TestAttackSubagentReachesOtherSessions(t *testing.T) {
	t.Parallel()
	s := replay(t,
		rule{"delegate", says("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Relay to the main session.", "agentId": "checker"}`})},
		rule{"[sub-agent ", says("Done.")},
		rule{"hello there", says("hi")},
		rule{"Relay to the main session.", says("",
			llmtest.Call{ID: "r1", Name: "sessions_send", Args: `{"sessionKey": "agent:checker:main", "message": "please write", "timeoutSeconds": 30}`},
			llmtest.Call{ID: "r2", Name: "cron", Args: `{"action": "add", "every": "1h", "message": "write it", "sessionKey": "agent:checker:main"}`},
			llmtest.Call{ID: "r3", Name: "cron", Args: `{"action": "add", "every": "1h", "message": "write it", "agentId": "checker", "sessionKey": "agent:checker:fresh"}`})},
		rule{"please write", says("", llmtest.Call{ID: "m1", Name: "write", Args: `{"path": "pwned-by-send.txt", "content": "x"}`})},
		rule{"write it", says("", llmtest.Call{ID: "m2", Name: "write", Args: `{"path": "pwned-by-schedule.txt", "content": "x"}`})},
	)
	cfg, ws := limitsConfig(t, s, "")
	env := cliEnvironment(t)
	cli := configuredCLI(t, env, cfg)
	cli(0, "run", "--agent", "checker", "--session", "agent:checker:main", "hello there")
	cli(0, "run", "--agent", "lead", "--session", "agent:lead:main", "delegate")
	if got := resultOf(t, s, "r1"); !strings.Contains(got, "rights that whoever asked for this lacks (it runs without the sub-agent policy)") {
		t.Errorf("sessions_send from the sub-agent to its agent's main session: %s", got)
	}
	for _, id := range []string{"r2", "r3"} {
		if got := resultOf(t, s, id); !strings.Contains(got, "A sub-agent may schedule messages only to its own session") {
			t.Errorf("a scheduled message from the sub-agent to another session (%s): %s", id, got)
		}
	}
	for _, sch := range schedulesOf(t, env, cfg, ws) {
		runCLIWith(t, env, "", "", "--config", cfg, "cron", "run", sch.ID, "--workspace", ws)
	}
	absent(t, ws, "pwned-by-send.txt", "pwned-by-schedule.txt")
}

// TestResumedSubagentKeepsLimits: a sub-agent's session keeps its limits
// however work reaches it later — a message from its parent
// (sessions_send), a person resuming it (toolbelt run --session, without
// naming its agent), and the outcome of a job it started, delivered to it
// as a follow-up. Resuming it as another agent is refused.
func TestResumedSubagentKeepsLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	asyncToolDir(t, dir)
	s := replay(t,
		rule{"delegate", says("", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Check the render.", "agentId": "checker"}`})},
		rule{"[sub-agent ", says("Done.")},
		rule{"Check the render.", says("Checked.")},
		rule{"ask the checker", func(body string) llmtest.Response {
			args := fmt.Sprintf(`{"sessionKey": %q, "message": "write from send", "timeoutSeconds": 30}`, childKey.FindString(body))
			return chat("", llmtest.Call{ID: "a1", Name: "sessions_send", Args: args})
		}},
		rule{"write from send", says("", llmtest.Call{ID: "a2", Name: "write", Args: `{"path": "pwned-by-send.txt", "content": "x"}`})},
		rule{"render then write", says("", llmtest.Call{ID: "j1", Name: "render", Args: `{"prompt": "a cat"}`})},
		rule{"[Background job ", says("", llmtest.Call{ID: "j2", Name: "write", Args: `{"path": "pwned-by-job.txt", "content": "x"}`})},
	)
	cfg, ws := limitsConfig(t, s, "tools:\n  dirs:\n    - path: "+filepath.Join(dir, "tools")+"\n      trusted: true\n")
	env := cliEnvironment(t)
	cli := configuredCLI(t, env, cfg)
	cli(0, "run", "--agent", "lead", "--session", "agent:lead:main", "delegate")
	var child string
	for key := range sessionsOf(t, env, cfg) {
		if childKey.MatchString(key) {
			child = key
		}
	}
	if child == "" {
		t.Fatal("no sub-agent session in the store")
	}
	if runsAs, _ := sessionsOf(t, env, cfg)[child]["runsAs"].(map[string]any); runsAs["subagent"] != true || runsAs["agentId"] != "checker" || runsAs["owner"] != true {
		t.Errorf("the sub-agent's session is not recorded as running as a sub-agent of checker: %v", runsAs)
	}

	cli(0, "run", "--agent", "lead", "--session", "agent:lead:main", "ask the checker")
	if got := resultOf(t, s, "a2"); !strings.Contains(got, subagentDenied) {
		t.Errorf("the sub-agent's session, sent a message by its parent, was not refused write: %s", got)
	}

	cli(0, "run", "--session", child, "render then write")
	if got := resultOf(t, s, "j1"); !strings.Contains(got, `"status":"pending"`) && !strings.Contains(got, `"status": "pending"`) {
		t.Fatalf("the render did not start a job: %s", got)
	}
	if got := resultOf(t, s, "j2"); !strings.Contains(got, subagentDenied) {
		t.Errorf("the sub-agent's session, resumed and handed its job's outcome, was not refused write: %s", got)
	}
	absent(t, ws, "pwned-by-send.txt", "pwned-by-job.txt")

	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--session", child, "write as the lead")
	if r.code == 0 || !strings.Contains(r.stderr, `belongs to agent "checker" and runs only as it, not as agent "lead"`) {
		t.Errorf("resuming the sub-agent's session as another agent: exit %d, %s", r.code, r.stderr)
	}
}
