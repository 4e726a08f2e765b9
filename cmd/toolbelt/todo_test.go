package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunKeepsThePlan: the model writes its plan with todo_write; run
// shows it as a checklist, session_status reads it back, and a resumed
// session still has it; a plan with two steps in progress is refused.
func TestRunKeepsThePlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  planner:\n    model: openai/m\n    workspace: "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := `{"todos": [
		{"content": "Read the spec", "status": "completed", "activeForm": "Reading the spec"},
		{"content": "Write the parser", "status": "in_progress", "activeForm": "Writing the parser"},
		{"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]}`
	twoAtOnce := `{"todos": [
		{"content": "A", "status": "in_progress", "activeForm": "Doing A"},
		{"content": "B", "status": "in_progress", "activeForm": "Doing B"}]}`
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "t1", Name: "todo_write", Args: plan})},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "t2", Name: "todo_write", Args: twoAtOnce})},
		llmtest.Response{Body: llmtest.Chat("", "Planned.")},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "s1", Name: "session_status", Args: `{}`})},
		llmtest.Response{Body: llmtest.Chat("", "Still on the parser.")})
	env := cliEnvironment(t)
	r := runCLIWith(t, env, dir, "", "--config", cfg, "run", "--agent", "planner", "--session", "agent:planner:plan", "--base-url", s.URL+"/v1", "plan it").expect(t, 0)
	checklist := "✓ todo_write: Todos (1/3 completed):\n  [x] Read the spec\n  [>] Writing the parser\n  [ ] Run the tests\n"
	if !strings.Contains(r.stderr, checklist) {
		t.Errorf("run does not show the plan as a checklist:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "✗ todo_write failed: 2 steps are in_progress") {
		t.Errorf("two steps in progress were not refused:\n%s", r.stderr)
	}
	runCLIWith(t, env, dir, "", "--config", cfg, "run", "--agent", "planner", "--session", "agent:planner:plan", "--base-url", s.URL+"/v1", "where are you?").expect(t, 0)
	status := compactJSON(t, s.Requests()[4].Body)
	for _, want := range []string{`\"todos\": [`, `\"content\": \"Write the parser\"`, `\"status\": \"in_progress\"`, `\"completed\": 1`, `\"total\": 3`} {
		if !strings.Contains(status, want) {
			t.Errorf("session_status of the resumed session lacks %s:\n%s", want, status)
		}
	}
}
