package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tools/memory/embedtest"
)

// tools.memory.embeddings in toolbelt.yaml makes memory_search hybrid: a
// note that says "film" is found for "cinema", through the CLI, with an
// embedding server on 127.0.0.1; and keyword-only with a note when that
// server fails.
func TestMemorySearchWithEmbeddingsFromTheConfig(t *testing.T) {
	t.Parallel()
	srv := embedtest.Start()
	defer srv.Close()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"memory/weekend.md": "# Weekend\nWe watched a film about lighthouses.\n",
		"memory/garden.md":  "# Garden\nTomatoes planted in April.\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "toolbelt.yaml")
	yaml := "tools:\n  memory:\n    embeddings:\n      provider: openai\n      baseUrl: " + srv.URL + "/v1\n      apiKeyEnv: \"-\"\n      maxRetries: -1\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnvironment(t)
	search := func() (text string, details map[string]any) {
		r := runCLIWith(t, env, "", "", "--config", cfg, "call", "memory_search", "--workspace", ws, "--json", "--args", `{"query":"cinema"}`).expect(t, 0)
		var msg struct {
			Content []struct{ Text string }
			Details map[string]any
		}
		if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil || len(msg.Content) == 0 {
			t.Fatalf("%v: %s %s", err, r.stdout, r.stderr)
		}
		return msg.Content[0].Text, msg.Details
	}
	text, details := search()
	if details["mode"] != "hybrid" || !strings.HasPrefix(text, "memory/weekend.md:1-2") || srv.Requests() == 0 {
		t.Fatalf("%q %v", text, details)
	}
	srv.Fail.Store(500)
	text, details = search()
	if details["mode"] != "keyword" || !strings.Contains(text, "keyword search only") || !strings.Contains(text, "No memory matches") {
		t.Fatalf("%q %v", text, details)
	}
}
