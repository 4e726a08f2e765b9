package llm

import "testing"

func TestContextWindow(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]int{
		"anthropic/claude-sonnet-4-5": 200_000,
		"gpt-4o-mini":                 128_000,
		"openai/gpt-4.1-nano":         1_047_576,
		"google/gemini-1.5-pro-002":   2_097_152,
		"ollama/llama3.2":             0,
		"":                            0,
	} {
		if got := ContextWindow(model); got != want {
			t.Errorf("ContextWindow(%q) = %d, want %d", model, got, want)
		}
	}
}
