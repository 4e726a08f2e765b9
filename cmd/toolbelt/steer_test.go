package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestSteerInterruptsRunningExec: the lead steers its sub-agent (subagents
// steer, sessions_send with steer) while the sub-agent's exec runs a
// command that would take a minute; the command is stopped at once, its
// result says it was interrupted by a steering message, and the
// sub-agent's next request has that result and the message.
func TestSteerInterruptsRunningExec(t *testing.T) {
	t.Parallel()
	for name, args := range map[string]string{
		"subagents":     `{"action":"steer","sessionKey":"%s","message":"Stop that, the short check will do."}`,
		"sessions_send": `{"steer":true,"sessionKey":"%s","message":"Stop that, the short check will do."}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			steerInterruptsExec(t, name, args)
		})
	}
}

// steerInterruptsExec runs TestSteerInterruptsRunningExec with the lead
// steering by a call of tool with args (%s: the sub-agent's key).
func steerInterruptsExec(t *testing.T, tool, args string) {
	cfg, ws := subagentsConfig(t)
	steer := llmtest.Response{Check: func(body []byte) *llmtest.Response {
		key := childKey.Find(body)
		if key == nil {
			resp := chat("(no child key in the request)")
			return &resp
		}
		resp := chat("Steering.", llmtest.Call{ID: "c3", Name: tool, Args: fmt.Sprintf(args, key)})
		return &resp
	}}
	final := []string{"Final: checked.", "[sub-agent "}
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("Spawning.", llmtest.Call{ID: "c1", Name: "sessions_spawn", Args: `{"task":"Run the long check","agentId":"checker"}`}),
			// Waits until the sub-agent's command runs (it makes the file).
			chat("Waiting for it to start.", llmtest.Call{ID: "c2", Name: "exec", Args: `{"command":"until [ -f started ]; do sleep 0.05; done; echo started","yieldMs":120000}`}),
			steer,
			decide(final, []string{"Waiting for the checker."}),
			decide(final, []string{"Waiting for the checker."}),
		}},
		llmtest.Route{Match: "Run the long check", Responses: []llmtest.Response{
			chat("Running it.", llmtest.Call{ID: "k1", Name: "exec", Args: `{"command":"touch started; sleep 60; echo finished","yieldMs":120000}`}),
			decide([]string{"Stopped; the short check passes.", "Tool exec was cancelled: interrupted by a steering message", "Stop that, the short check will do."}, []string{"(not interrupted)"}),
		}},
	)
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--session", "agent:lead:main", "--workspace", ws, "--yes", "--base-url", s.URL+"/v1", "check it").expect(t, 0)
	if r.stdout != "Final: checked.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	var answered bool
	for _, req := range s.Requests() {
		body := string(req.Body)
		if strings.Contains(body, "You are the lead.") && strings.Contains(body, "Stopped; the short check passes.") {
			answered = true
		}
		if strings.Contains(body, "You are a checker.") && strings.Contains(body, "echo finished") && strings.Contains(body, "finished\\n") {
			t.Errorf("the sub-agent's command ran to its end:\n%s", body)
		}
	}
	if !answered {
		t.Errorf("the sub-agent's answer after the interruption did not reach the lead\nstderr %s", r.stderr)
	}
}
