package main

import (
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestThinkingLevels: an agent's thinking (agents.<id>.thinking) goes on
// the wire as its provider's setting, --thinking overrides it for the run,
// and sessions_spawn's thinking overrides the spawned agent's own.
func TestThinkingLevels(t *testing.T) {
	t.Parallel()
	cfg, ws := configBeside(t, func(string) string {
		return `agents:
  lead:
    model: openai/gpt-5.1
    system: You are the lead.
    thinking: low
    subagents: {allow: [checker]}
  checker:
    model: openai/gpt-5.1-mini
    system: You are a checker.
    thinking: high
`
	})
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: "You are the lead.", Responses: []llmtest.Response{
			chat("Spawning.", llmtest.Call{ID: "s1", Name: "sessions_spawn", Args: `{"task": "Check fact A", "agentId": "checker", "thinking": "off"}`}),
			decide([]string{"Final: A is true.", "[sub-agent "}, []string{"Waiting for the checker."}),
			decide([]string{"Final: A is true.", "[sub-agent "}, []string{"Waiting for the checker."}),
		}},
		llmtest.Route{Match: "Check fact A", Responses: []llmtest.Response{chat("A is true.")}},
	)
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--session", "agent:lead:main", "--workspace", ws, "--base-url", s.URL+"/v1", "check A").expect(t, 0)
	if r.stdout != "Final: A is true.\n" {
		t.Fatalf("stdout %q\nstderr %s", r.stdout, r.stderr)
	}
	var lead, checker int
	for _, req := range s.Requests() {
		body := compactJSON(t, req.Body)
		switch {
		case strings.Contains(body, "You are the lead."):
			lead++
			if !strings.Contains(body, `"reasoning_effort":"low"`) {
				t.Errorf("the lead's request lacks its agent's thinking (low):\n%s", body)
			}
		case strings.Contains(body, "You are a checker."):
			checker++
			if !strings.Contains(body, `"reasoning_effort":"none"`) {
				t.Errorf("the checker's request lacks sessions_spawn's thinking (off):\n%s", body)
			}
		}
	}
	if lead < 2 || checker != 1 {
		t.Fatalf("%d requests of the lead, %d of the checker", lead, checker)
	}

	// --thinking wins over the agent's.
	s2 := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "ok")})
	runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--thinking", "high", "--workspace", ws, "--base-url", s2.URL+"/v1", "hi").expect(t, 0)
	if body := compactJSON(t, s2.Requests()[0].Body); !strings.Contains(body, `"reasoning_effort":"high"`) {
		t.Errorf("--thinking high did not win:\n%s", body)
	}

	r = runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "lead", "--thinking", "max", "--workspace", ws, "hi").expect(t, 2)
	if !strings.Contains(r.stderr, `--thinking: thinking level "max": use one of off, low, medium, high`) {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestThinkingConfigChecked: a thinking level that is none of the four is
// a configuration error naming the key.
func TestThinkingConfigChecked(t *testing.T) {
	t.Parallel()
	cfg, ws := configBeside(t, func(string) string {
		return "agents:\n  lead:\n    model: openai/gpt-5.1\n    thinking: lots\n"
	})
	r := runCLIWith(t, cliEnvironment(t), "", "", "--config", cfg, "run", "--agent", "lead", "--workspace", ws, "hi").expect(t, 2)
	if !strings.Contains(r.stderr, `agents.lead.thinking is "lots": use off, low, medium, high`) {
		t.Errorf("stderr %q", r.stderr)
	}
}
