package llm_test

import (
	"testing"

	"github.com/toolbelt/toolbelt/llm"
)

// TestThinkingOnTheWire checks each provider's parameter for each thinking
// level, as the replay server received it.
func TestThinkingOnTheWire(t *testing.T) {
	for _, c := range []struct {
		spec, level string
		// key is the body's field the level goes in; want its JSON (""
		// when the field must be absent).
		key, want string
		maxTokens float64 // the body's max_tokens, when checked
	}{
		{"anthropic/claude-sonnet-4-5", "", "thinking", "", 1000},
		{"anthropic/claude-sonnet-4-5", "off", "thinking", `{"type":"disabled"}`, 1000},
		{"anthropic/claude-sonnet-4-5", "low", "thinking", `{"budget_tokens":2048,"type":"enabled"}`, 3048},
		{"anthropic/claude-sonnet-4-5", "medium", "thinking", `{"budget_tokens":8192,"type":"enabled"}`, 9192},
		{"anthropic/claude-sonnet-4-5", "high", "thinking", `{"budget_tokens":24576,"type":"enabled"}`, 25576},
		{"openai/gpt-5.1", "", "reasoning_effort", "", 0},
		{"openai/gpt-5.1", "off", "reasoning_effort", `"none"`, 0},
		{"openai/gpt-5", "off", "reasoning_effort", `"minimal"`, 0},
		{"openai/o3", "off", "reasoning_effort", "", 0},
		{"openai/o3", "low", "reasoning_effort", `"low"`, 0},
		{"openai/gpt-5", "medium", "reasoning_effort", `"medium"`, 0},
		{"ollama/qwen3", "off", "reasoning_effort", `"none"`, 0},
		{"groq/openai/gpt-oss-20b", "high", "reasoning_effort", `"high"`, 0},
		{"openai-responses/gpt-5.1", "", "reasoning", "", 0},
		{"openai-responses/gpt-5.1", "off", "reasoning", `{"effort":"none"}`, 0},
		{"openai-responses/o4-mini", "off", "reasoning", "", 0},
		{"openai-responses/gpt-5", "high", "reasoning", `{"effort":"high"}`, 0},
		{"google/gemini-2.5-flash", "", "generationConfig", `{"maxOutputTokens":1000}`, 0},
		{"google/gemini-2.5-flash", "off", "generationConfig", `{"maxOutputTokens":1000,"thinkingConfig":{"thinkingBudget":0}}`, 0},
		{"google/gemini-2.5-pro", "off", "generationConfig", `{"maxOutputTokens":1000}`, 0},
		{"google/gemini-2.5-pro", "low", "generationConfig", `{"maxOutputTokens":1000,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}`, 0},
		{"google/gemini-3-pro-preview", "medium", "generationConfig", `{"maxOutputTokens":1000,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}}`, 0},
		{"google/gemini-3-pro-preview", "off", "generationConfig", `{"maxOutputTokens":1000}`, 0},
		{"google/gemini-3-flash-preview", "off", "generationConfig", `{"maxOutputTokens":1000,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"minimal"}}`, 0},
		{"google/gemini-3-flash-preview", "medium", "generationConfig", `{"maxOutputTokens":1000,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"medium"}}`, 0},
		{"google/gemini-2.0-flash", "high", "generationConfig", `{"maxOutputTokens":1000}`, 0},
	} {
		t.Run(c.spec+"/"+c.level, func(t *testing.T) {
			b := sendRequest(t, c.spec, llm.Request{Messages: []llm.Message{llm.UserText("hi")}, MaxTokens: 1000, Thinking: c.level})
			v, ok := b[c.key]
			switch {
			case c.want == "" && ok:
				t.Errorf("%s = %s, want none", c.key, js(v))
			case c.want != "" && js(v) != c.want:
				t.Errorf("%s = %s, want %s", c.key, js(v), c.want)
			}
			if c.maxTokens != 0 && b["max_tokens"] != c.maxTokens {
				t.Errorf("max_tokens = %v, want %v (above the budget)", b["max_tokens"], c.maxTokens)
			}
		})
	}
}

func TestParseThinking(t *testing.T) {
	for in, want := range map[string]string{"": "", "OFF": "off", " high ": "high", "medium": "medium"} {
		if got, err := llm.ParseThinking(in); err != nil || got != want {
			t.Errorf("ParseThinking(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := llm.ParseThinking("max"); err == nil {
		t.Error("ParseThinking(max) accepted")
	}
}
