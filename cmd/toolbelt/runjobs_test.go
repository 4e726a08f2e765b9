package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// asyncToolDir writes a directory tool "render" whose job is done at its
// first poll, in a tools folder under dir, and a config that loads it.
func asyncToolDir(t *testing.T, dir string) (config string) {
	t.Helper()
	tdir := filepath.Join(dir, "tools", "render")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"metadata.json": `{"name": "render", "description": "Renders a clip in the background.", "async": true, "asyncType": "polling", "pollingInterval": 0.1, "estimatedTime": 5}`,
		"schema.json":   `{"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}`,
		"handler.sh": `#!/bin/sh
req=$(cat)
case "$req" in
*'"operation":"submit"'*) echo '{"success": true, "externalId": "ext-1"}' ;;
*'"operation":"poll"'*) echo '{"success": true, "status": "completed", "result": "rendered clip.mp4"}' ;;
*) echo '{"success": false, "error": "unexpected"}' ;;
esac
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tdir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config = filepath.Join(dir, "toolbelt.yaml")
	if err := os.WriteFile(config, []byte("tools:\n  dirs:\n    - path: "+filepath.Join(dir, "tools")+"\n      trusted: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}

// TestRunWaitsForJobs: the model calls an async tool and ends its turn;
// toolbelt run waits for the job, hands its result to the model as a
// follow-up, and returns the model's answer to it.
func TestRunWaitsForJobs(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	config := asyncToolDir(t, dir)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Starting the render.", llmtest.Call{ID: "toolu_01A", Name: "render", Args: `{"prompt": "a cat"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "The render is running; I will report when it is done.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Your clip is ready: rendered clip.mp4")})
	r := runCLI(t, "", "--config", config, "run", "--model", "anthropic/claude-test", "--base-url", s.URL, "--workspace", ws, "render a cat")
	r.expect(t, 0)
	if !strings.Contains(r.stdout, "Your clip is ready: rendered clip.mp4") {
		t.Errorf("stdout = %q", r.stdout)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (call, turn end, follow-up)", len(reqs))
	}
	second, third := compactJSON(t, reqs[1].Body), compactJSON(t, reqs[2].Body)
	if !strings.Contains(second, `\"status\":\"pending\"`) || !strings.Contains(second, `\"taskId\":\"task`) {
		t.Errorf("the tool result is not the pending envelope:\n%s", second)
	}
	if !strings.Contains(third, "[Background job task") || !strings.Contains(third, "of render completed.]") || !strings.Contains(third, "rendered clip.mp4") {
		t.Errorf("the follow-up lacks the job's result:\n%s", third)
	}
}
