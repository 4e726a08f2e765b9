package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// agentsConfig writes a toolbelt.yaml with two agents; writer's workspace
// (ws, next to the file) holds its system prompt and a memory note.
func agentsConfig(t *testing.T) (cfg, ws string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	for p, text := range map[string]string{
		"AGENTS.md":       "You are the writer. Be brief.",
		"memory/notes.md": "# Style\nThe house style is sentence case headings.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg = filepath.Join(dir, "toolbelt.yaml")
	yaml := `model: openai/top-model
agents:
  writer:
    name: Writer
    description: Writes and edits prose.
    model: openai/agent-model
    workspace: ws
    system: "@AGENTS.md"
    tools: {deny: [exec]}
    subagents: {allow: [checker], maxDepth: 2}
  checker:
    description: Checks facts.
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, ws
}

func TestAgentsLists(t *testing.T) {
	t.Parallel()
	cfg, ws := agentsConfig(t)
	r := runCLI(t, "", "--config", cfg, "agents").expect(t, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], "checker") || !strings.Contains(lines[2], "openai/agent-model") || !strings.Contains(lines[2], "Writes and edits prose.") {
		t.Fatalf("%s", r.stdout)
	}
	r = runCLI(t, "", "--config", cfg, "agents", "--json").expect(t, 0)
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("%v %s", err, r.stdout)
	}
	w := got[1]
	if w["id"] != "writer" || w["name"] != "Writer" || w["workspace"] != ws || w["maxDepth"] != 2.0 || w["maxConcurrent"] != 4.0 || w["spawns"].([]any)[0] != "checker" {
		t.Errorf("%v", w)
	}
	if c := got[0]; c["name"] != "checker" || c["model"] != "openai/top-model" {
		t.Errorf("checker inherits the top-level model and its id as name: %v", c)
	}
	empty := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(empty, []byte("model: openai/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "--config", empty, "agents").expect(t, 0); !strings.Contains(r.stdout, "No agents are configured") {
		t.Errorf("%q", r.stdout)
	}
	if r := runCLI(t, "", "--config", empty, "agents", "--json").expect(t, 0); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("%q", r.stdout)
	}
}

// TestRunAsConfiguredAgent: run --agent uses the agent's model, system
// prompt (from its workspace), workspace (its memory) and tool policy.
func TestRunAsConfiguredAgent(t *testing.T) {
	t.Parallel()
	cfg, _ := agentsConfig(t)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "",
			llmtest.Call{ID: "c1", Name: "memory_search", Args: `{"query":"house style headings"}`},
			llmtest.Call{ID: "c2", Name: "exec", Args: `{"command":"echo hi"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Sentence case.")})
	env := append(cliEnvironment(t), "TOOLBELT_MODEL=openai/env-model")
	r := runCLIWith(t, env, t.TempDir(), "", "--config", cfg, "run", "--agent", "writer", "--base-url", s.URL+"/v1", "which heading style?").expect(t, 0)
	if r.stdout != "Sentence case.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := s.Requests()
	first, second := compactJSON(t, reqs[0].Body), compactJSON(t, reqs[1].Body)
	if !strings.Contains(first, `"model":"agent-model"`) || !strings.Contains(first, "You are the writer. Be brief.") {
		t.Errorf("first request lacks the agent's model or system prompt:\n%s", first)
	}
	if !strings.Contains(second, "memory/notes.md:1-2") || !strings.Contains(second, "sentence case headings") {
		t.Errorf("memory_search did not search the agent's workspace:\n%s", second)
	}
	if !strings.Contains(second, "agent writer: deny exec") {
		t.Errorf("exec was not refused by the agent's policy:\n%s", second)
	}

	// --model and --system win over the agent's.
	s2 := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "ok")})
	runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "writer", "--model", "openai/flag-model", "--system", "flag system", "--base-url", s2.URL+"/v1", "hi").expect(t, 0)
	if body := compactJSON(t, s2.Requests()[0].Body); !strings.Contains(body, `"model":"flag-model"`) || !strings.Contains(body, "flag system") || strings.Contains(body, "You are the writer") {
		t.Errorf("flags did not win:\n%s", body)
	}

	r = runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "nobody", "hi").expect(t, 2)
	if !strings.Contains(r.stderr, "--agent nobody: no such agent; configured: checker, writer") {
		t.Errorf("%q", r.stderr)
	}
}

// TestSessionsListAndShow: an agent's runs are kept as sessions with their
// status; toolbelt sessions lists them (table, --json) and shows one with
// its transcript; --session resumes one.
func TestSessionsListAndShow(t *testing.T) {
	t.Parallel()
	cfg, _ := agentsConfig(t)
	env := cliEnvironment(t)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "memory_get", Args: `{"path":"memory/notes.md"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Sentence case.")},
		llmtest.Response{Status: 400, Body: `{"error":{"message":"bad request: nope","type":"invalid_request_error"}}`},
		llmtest.Response{Body: llmtest.Chat("", "Still sentence case.")})
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "writer", "--base-url", s.URL+"/v1", "which heading style?").expect(t, 0)
	m := regexp.MustCompile(`toolbelt: session (agent:writer:cli:[0-9a-f]{12}) \(resume it with --session `).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no session key on stderr: %q", r.stderr)
	}
	key := m[1]
	// A run that fails is recorded as failed.
	runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "checker", "--model", "openai/x", "--base-url", s.URL+"/v1", "check").expect(t, 1)

	r = runCLIWith(t, env, "", "", "--config", cfg, "sessions", "--json").expect(t, 0)
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("%v %s", err, r.stdout)
	}
	byKey := map[string]map[string]any{}
	for _, s := range list {
		for _, k := range []string{"key", "agentId", "parentKey", "status", "model", "createdAt", "updatedAt"} {
			if _, ok := s[k]; !ok {
				t.Errorf("key %q missing: %v", k, s)
			}
		}
		byKey[s["key"].(string)] = s
	}
	w := byKey[key]
	if w["agentId"] != "writer" || w["status"] != "done" || w["model"] != "openai/agent-model" || w["parentKey"] != "" || w["messages"] != 4.0 || w["usage"].(map[string]any)["input"] != 120.0 {
		t.Errorf("writer's session: %v", w)
	}
	var failed map[string]any
	for k, s := range byKey {
		if strings.HasPrefix(k, "agent:checker:cli:") {
			failed = s
		}
	}
	if failed == nil || failed["status"] != "failed" || failed["agentId"] != "checker" {
		t.Errorf("checker's session: %v", byKey)
	}
	r = runCLIWith(t, env, "", "", "--config", cfg, "sessions", "--agent", "writer").expect(t, 0)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || strings.Join(strings.Fields(lines[1])[:6], " ") != key+" writer done openai/agent-model 4 120/40" {
		t.Errorf("table:\n%s", r.stdout)
	}

	r = runCLIWith(t, env, "", "", "--config", cfg, "sessions", "show", key).expect(t, 0)
	for _, want := range []string{"session  " + key + "\n", "agent    writer\n", "status   done\n", "[1] user:\nwhich heading style?\n", "→ memory_get {\"path\":\"memory/notes.md\"}", "[3] toolResult (memory_get):\n# Style\nThe house style is sentence case headings.\n", "[4] assistant:\nSentence case.\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLIWith(t, env, "", "", "--config", cfg, "sessions", "show", key, "--json").expect(t, 0)
	var shown struct {
		Key        string
		Status     string
		Transcript []map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || shown.Key != key || len(shown.Transcript) != 4 || shown.Transcript[3]["role"] != "assistant" {
		t.Errorf("%v %s", err, r.stdout)
	}
	// Resuming the session sends its history and appends to it.
	runCLIWith(t, env, "", "", "--config", cfg, "run", "--agent", "writer", "--session", key, "--base-url", s.URL+"/v1", "sure?").expect(t, 0)
	reqs := s.Requests()
	if last := compactJSON(t, reqs[len(reqs)-1].Body); !strings.Contains(last, "which heading style?") || !strings.Contains(last, "sure?") {
		t.Errorf("resumed run lacks the history:\n%s", last)
	}
	r = runCLIWith(t, env, "", "", "--config", cfg, "sessions", "show", key, "--json").expect(t, 0)
	if json.Unmarshal([]byte(r.stdout), &shown) != nil || len(shown.Transcript) != 6 || shown.Status != "done" {
		t.Errorf("after resuming: %s", r.stdout)
	}
	if r := runCLIWith(t, env, "", "", "--config", cfg, "sessions", "show", "agent:nobody:main"); r.code != 2 || !strings.Contains(r.stderr, "no such session; toolbelt sessions lists them") {
		t.Errorf("missing session: %d %q", r.code, r.stderr)
	}
}
