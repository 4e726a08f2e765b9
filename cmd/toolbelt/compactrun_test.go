package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunCompact: with --compact, and for an agent with compact: true,
// the model is offered tool_search, tool_describe and tool_call alone,
// the system prompt names the tools with one line each, and tool_call
// runs the named tool through the pipeline.
func TestRunCompact(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.md"), []byte("compact works"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ws, "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  small:\n    model: openai/m\n    workspace: "+ws+"\n    compact: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnvironment(t)
	for _, args := range [][]string{
		{"--config", cfg, "run", "--compact", "--model", "openai/m", "--workspace", ws},
		{"--config", cfg, "run", "--agent", "small"},
	} {
		s := llmtest.New(t,
			llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "tool_call", Args: `{"name":"read","arguments":{"path":"notes.md"}}`})},
			llmtest.Response{Body: llmtest.Chat("", "Read it.")})
		runCLIWith(t, env, ws, "", append(args, "--base-url", s.URL+"/v1", "read the notes")...).expect(t, 0)
		var first struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(s.Requests()[0].Body, &first); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range first.Tools {
			names = append(names, tl.Function.Name)
		}
		if !slices.Equal(names, []string{"tool_call", "tool_describe", "tool_search"}) {
			t.Errorf("%v: the model was offered %v", args, names)
		}
		if len(first.Messages) == 0 || first.Messages[0].Role != "system" || !strings.Contains(first.Messages[0].Content, "\n- read: Read a file in the workspace.\n") {
			t.Errorf("%v: the system prompt does not name the tools: %+v", args, first.Messages)
		}
		if result := compactJSON(t, s.Requests()[1].Body); !strings.Contains(result, "compact works") {
			t.Errorf("%v: tool_call did not read the file:\n%s", args, textclip.Clip(result, 2000))
		}
	}
}
