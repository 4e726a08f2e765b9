package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunCompactsAsConfigured: with the provider's contextWindow and the
// compaction settings of toolbelt.yaml, a run whose reads fill the window
// has its summary written by compaction.model, and the transcript marks
// the compaction.
func TestRunCompactsAsConfigured(t *testing.T) {
	t.Parallel()
	read := func(n string) llmtest.Response {
		return llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c" + n, Name: "read", Args: `{"path":"big` + n + `.txt"}`})}
	}
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: `"model":"summarizer"`, Responses: []llmtest.Response{{Body: llmtest.Chat("", "SUMMARY: the first files were read.")}}},
		llmtest.Route{Match: `"model":"my-model"`, Responses: []llmtest.Response{read("1"), read("2"), read("3"), {Body: llmtest.Chat("", "done")}}})
	dir := t.TempDir()
	for _, n := range []string{"1", "2", "3"} {
		if err := os.WriteFile(filepath.Join(dir, "big"+n+".txt"), []byte(strings.Repeat("all work and no play\n", 150)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "toolbelt.yaml")
	yaml := "model: local/my-model\nproviders:\n  local:\n    base: vllm\n    url: " + s.URL + "/v1\n    contextWindow: 3000\n" +
		"compaction:\n  keepTurns: 1\n  toolResultTurns: 1\n  model: local/summarizer\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "TOOLBELT_MODEL=")
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--workspace", dir, "--json", "read big1.txt to big3.txt").expect(t, 0)
	if !strings.Contains(r.stdout, `"firstKept":`) || !strings.Contains(r.stdout, "SUMMARY: the first files were read.") {
		t.Errorf("the transcript marks no compaction: %.2000s", r.stdout)
	}
	var summarized bool
	for _, req := range s.Requests() {
		summarized = summarized || strings.Contains(string(req.Body), `"model":"summarizer"`)
	}
	if !summarized {
		t.Error("compaction.model was not asked for the summary")
	}
}

// TestRunRepairsAsConfigured: with repair.model in toolbelt.yaml, a read
// whose arguments fail validation twice in a row is repaired by that
// model and run; the audit log has the repair's record beside the calls.
func TestRunRepairsAsConfigured(t *testing.T) {
	t.Parallel()
	bad := func(id string) llmtest.Response {
		return llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: id, Name: "read", Args: `{}`})}
	}
	s := llmtest.NewRouted(t,
		llmtest.Route{Match: `"model":"fixer"`, Responses: []llmtest.Response{{Body: llmtest.Chat("", `{"path":"a.txt"}`)}}},
		llmtest.Route{Match: `"model":"my-model"`, Responses: []llmtest.Response{bad("r1"), bad("r2"), {Body: llmtest.Chat("", "done")}}})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("the treasure is under the oak\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "toolbelt.yaml")
	yaml := "model: local/my-model\nproviders:\n  local:\n    base: vllm\n    url: " + s.URL + "/v1\nrepair:\n  model: local/fixer\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "TOOLBELT_MODEL=")
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--workspace", dir, "--json", "read a.txt").expect(t, 0)
	if !strings.Contains(r.stdout, "the treasure is under the oak") || !strings.Contains(r.stdout, `"repaired": {`) {
		t.Errorf("the second read was not repaired: %.3000s", r.stdout)
	}
	var repairs int
	for _, rec := range auditRecords(t, env, "--tool", "read") {
		if rec.Kind == audit.KindRepair && !rec.IsError && strings.Contains(rec.Note, "local/fixer repaired") {
			repairs++
		}
	}
	if repairs != 1 {
		t.Errorf("%d repair records in the audit log", repairs)
	}
}
