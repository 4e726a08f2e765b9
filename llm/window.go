package llm

import "strings"

// contextWindows are the context windows, in tokens, of well-known model
// families, by model-name prefix; the longest matching prefix wins.
var contextWindows = map[string]int{
	"claude-":          200_000,
	"gpt-4o":           128_000,
	"gpt-4.1":          1_047_576,
	"gpt-5":            400_000,
	"o3":               200_000,
	"o4-mini":          200_000,
	"gemini-1.5-pro":   2_097_152,
	"gemini-1.5-flash": 1_048_576,
	"gemini-2.0":       1_048_576,
	"gemini-2.5":       1_048_576,
}

// ContextWindow returns the context window in tokens of model (MODEL or
// PROVIDER/MODEL), 0 when it is not known.
func ContextWindow(model string) int {
	if i := strings.LastIndex(model, "/"); i >= 0 {
		model = model[i+1:]
	}
	best, n := 0, 0
	for prefix, w := range contextWindows {
		if strings.HasPrefix(model, prefix) && len(prefix) > n {
			best, n = w, len(prefix)
		}
	}
	return best
}
