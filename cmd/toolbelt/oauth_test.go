package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunClaudeSubscription: a providers entry with oauth: true sends its
// key as Claude Code does and offers the tools under Claude Code's names;
// the model's Read runs read, and the transcript keeps Toolbelt's name.
// config check refuses oauth for a provider that does not speak
// Anthropic's API.
func TestRunClaudeSubscription(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("subscribed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_S1", Name: "Read", Args: `{"file_path":"a.txt"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "It says subscribed.")})
	cfg := filepath.Join(ws, "toolbelt.yaml")
	yaml := "providers:\n  anthropic:\n    url: " + s.URL + "\n    keyEnv: TB_TEST_CLAUDE_TOKEN\n    oauth: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "TB_TEST_CLAUDE_TOKEN=a-subscription-token")
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--model", "anthropic/claude-x", "--workspace", ws, "--json", "read a.txt").expect(t, 0)
	var transcript []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	call, _ := transcript[1]["content"].([]any)[0].(map[string]any)
	if call["name"] != "read" || transcript[2]["toolName"] != "read" || transcript[2]["isError"] == true {
		t.Errorf("call %v, result %v", call, transcript[2])
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer a-subscription-token" || reqs[0].Header.Get("X-Api-Key") != "" {
		t.Fatalf("requests %d, headers %v", len(reqs), reqs[0].Header)
	}
	if body := string(reqs[0].Body); !strings.Contains(body, `"name":"Read"`) || !strings.Contains(body, `"name":"Bash"`) || strings.Contains(body, `"name":"read"`) {
		t.Errorf("the tools did not go out under Claude Code's names: %s", body)
	}
	if second := string(reqs[1].Body); !strings.Contains(second, `"tool_use_id":"toolu_S1"`) || !strings.Contains(second, "subscribed") {
		t.Errorf("second request: %s", second)
	}
	bad := filepath.Join(ws, "bad.yaml")
	if err := os.WriteFile(bad, []byte("providers:\n  mine:\n    base: openai\n    oauth: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, "", "", "config", "check", bad)
	if r.code == 0 || !strings.Contains(r.stderr, "providers.mine.oauth is for Anthropic's API only") {
		t.Errorf("config check: code %d, stderr %q", r.code, r.stderr)
	}
}
