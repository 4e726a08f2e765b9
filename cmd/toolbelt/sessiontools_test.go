package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestListSessionTools: toolbelt list shows the core tools of the sessions,
// agents and memory sections available when agents are configured; without
// agents, those that need them are unavailable, saying why.
func TestListSessionTools(t *testing.T) {
	t.Parallel()
	ids := []string{"sessions_list", "sessions_history", "sessions_send", "sessions_spawn", "subagents", "session_status", "agents_list"}
	core := append([]string{"result_read", "todo_write", "memory_search", "memory_get"}, ids...)
	list := func(cfg string) map[string]map[string]any {
		r := runCLI(t, "", "--config", cfg, "list", "--json", "--include", "group:sessions,group:agents,group:memory").expect(t, 0)
		var got []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		byID := map[string]map[string]any{}
		for _, m := range got {
			// The test registry adds tools of its own; skill is offered
			// only to agents' runs, which load the skills.
			if m["source"] == "core" && m["id"] != "skill" {
				byID[m["id"].(string)] = m
			}
		}
		return byID
	}
	withAgents, _ := agentsConfig(t)
	got := list(withAgents)
	if len(got) != len(core) {
		t.Errorf("with agents configured, list shows %d tools of the sessions, agents and memory sections, want %d: %v", len(got), len(core), got)
	}
	for _, id := range core {
		if got[id]["available"] != true {
			t.Errorf("with agents configured, %s: %v", id, got[id])
		}
	}
	none := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(none, []byte("model: openai/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = list(none)
	for _, id := range ids {
		if got[id]["available"] != false || got[id]["unavailableReason"] != "no agents configured: add agents: to toolbelt.yaml (docs/agents.md)" {
			t.Errorf("without agents, %s: %v", id, got[id])
		}
	}
}

// TestRunCallsSessionTools: in toolbelt run --agent, session_status reports
// the run's own session (running, as the run is) and agents_list the
// agents it may spawn.
func TestRunCallsSessionTools(t *testing.T) {
	t.Parallel()
	cfg, _ := agentsConfig(t)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "",
			llmtest.Call{ID: "c1", Name: "session_status", Args: `{}`},
			llmtest.Call{ID: "c2", Name: "agents_list", Args: `{}`})},
		llmtest.Response{Body: llmtest.Chat("", "Done.")})
	r := runCLIWith(t, cliEnvironment(t), t.TempDir(), "", "--config", cfg, "run", "--agent", "writer", "--session", "agent:writer:main", "--base-url", s.URL+"/v1", "status?").expect(t, 0)
	if r.stdout != "Done.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	second := compactJSON(t, s.Requests()[1].Body)
	for _, want := range []string{`\"key\": \"agent:writer:main\"`, `\"agentId\": \"writer\"`, `\"status\": \"running\"`, `\"id\": \"checker\"`, `\"description\": \"Checks facts.\"`} {
		if !strings.Contains(second, want) {
			t.Errorf("the tools' results lack %s:\n%s", want, second)
		}
	}
	if strings.Contains(second, `\"id\": \"writer\"`) {
		t.Errorf("agents_list lists writer, which writer may not spawn:\n%s", second)
	}
}
