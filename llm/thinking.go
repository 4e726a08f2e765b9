package llm

import (
	"fmt"
	"strings"
)

// The thinking levels a request can ask for ([Request.Thinking]). The empty
// level sends nothing: the provider's and model's own default.
const (
	ThinkingOff    = "off"
	ThinkingLow    = "low"
	ThinkingMedium = "medium"
	ThinkingHigh   = "high"
)

// ThinkingLevels are the levels in increasing order.
var ThinkingLevels = []string{ThinkingOff, ThinkingLow, ThinkingMedium, ThinkingHigh}

// ParseThinking checks a thinking level: one of ThinkingLevels, any case,
// or empty (the provider's default).
func ParseThinking(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", ThinkingOff, ThinkingLow, ThinkingMedium, ThinkingHigh:
		return s, nil
	}
	return "", fmt.Errorf("thinking level %q: use one of %s", s, strings.Join(ThinkingLevels, ", "))
}

// thinkingBudgets are the token budgets of the levels where a provider
// takes a budget (Anthropic, Gemini 2.5).
var thinkingBudgets = map[string]int{ThinkingLow: 2048, ThinkingMedium: 8192, ThinkingHigh: 24576}

// anthropicThinking is the Messages API's thinking parameter for level,
// and the max_tokens that leaves maxTokens for the answer beside the
// budget (Anthropic counts thinking in max_tokens, which must exceed the
// budget). nil: send none.
func anthropicThinking(level string, maxTokens int) (any, int) {
	switch level {
	case "":
		return nil, maxTokens
	case ThinkingOff:
		return map[string]any{"type": "disabled"}, maxTokens
	}
	budget := thinkingBudgets[level]
	return map[string]any{"type": "enabled", "budget_tokens": budget}, maxTokens + budget
}

// openAIEffort is the reasoning effort (Chat Completions reasoning_effort,
// Responses reasoning.effort) for level on model; "" sends none. Off is
// "none" where the model can reason not at all (gpt-5.1 and later, and
// the OpenAI-compatible servers that take it), "minimal" on gpt-5, and
// nothing on OpenAI's other models (the o-series always reasons; older
// models refuse the parameter).
func openAIEffort(provider, model, level string) string {
	if level != ThinkingOff {
		return level
	}
	if provider != "openai" && provider != "openai-responses" {
		return "none"
	}
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "gpt-5."):
		return "none"
	case strings.HasPrefix(m, "gpt-5"):
		return "minimal"
	}
	return ""
}

// geminiThinking is the thinkingConfig for level on model; nil sends none.
// Gemini 3 takes a thinking level (Pro: low or high; Flash also minimal
// and medium), Gemini 2.5 a budget (0 turns it off, except on Pro, which
// always thinks). Thoughts are asked for whenever the model thinks, so
// they stream as thinking.
func geminiThinking(model, level string) map[string]any {
	m := strings.ToLower(model)
	pro := strings.Contains(m, "pro")
	switch {
	case level == "":
		return nil
	case strings.HasPrefix(m, "gemini-3"):
		l := level
		switch {
		case level == ThinkingOff && pro:
			return nil
		case level == ThinkingOff:
			l = "minimal"
		case level == ThinkingMedium && pro:
			l = ThinkingHigh
		}
		return map[string]any{"thinkingLevel": l, "includeThoughts": true}
	case strings.HasPrefix(m, "gemini-2.5"):
		if level == ThinkingOff {
			if pro {
				return nil
			}
			return map[string]any{"thinkingBudget": 0}
		}
		return map[string]any{"thinkingBudget": thinkingBudgets[level], "includeThoughts": true}
	}
	return nil
}
