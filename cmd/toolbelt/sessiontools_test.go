package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestListSessionTools: toolbelt list shows the session tools and
// agents_list available when agents are configured, and why not otherwise.
func TestListSessionTools(t *testing.T) {
	t.Parallel()
	ids := []string{"sessions_list", "sessions_history", "session_status", "agents_list"}
	list := func(cfg string) map[string]map[string]any {
		r := runCLI(t, "", "--config", cfg, "list", "--json", "--include", "group:sessions,group:agents").expect(t, 0)
		var got []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		byID := map[string]map[string]any{}
		for _, m := range got {
			byID[m["id"].(string)] = m
		}
		return byID
	}
	withAgents, _ := agentsConfig(t)
	got := list(withAgents)
	for _, id := range ids {
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
