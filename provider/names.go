package provider

import (
	"regexp"
	"strings"
)

// namePrefixes are what models put before a tool's name.
var namePrefixes = []string{"functions.", "function.", "tools.", "tool.", "functions/", "tools/", "functions:", "default_api.", "default_api:", "default_api/"}

// counterSuffix matches the counters models append: read:0, read_1, read-2.
var counterSuffix = regexp.MustCompile(`(?:[:_-]\d+)$`)

// ToolName maps a tool name as a model wrote it to a registered name, with
// lookup telling which names are registered (it folds aliases and case, and
// fails on a case-insensitive match that fits several tools). The name is
// trimmed; then a prefix models add is dropped ("functions.read",
// "tools/exec"), and only if that is not a tool, a trailing counter
// ("read:0", "read_1"). When nothing fits — or the lookup finds the name
// ambiguous — the name is returned as written, so the call fails as unknown
// rather than run the wrong tool.
func ToolName(name string, lookup func(string) (string, bool)) string {
	name = strings.TrimSpace(name)
	bare := name
	for _, p := range namePrefixes {
		if len(bare) > len(p) && strings.EqualFold(bare[:len(p)], p) {
			bare = bare[len(p):]
			break
		}
	}
	for _, candidate := range []string{name, bare, counterSuffix.ReplaceAllString(bare, "")} {
		if id, ok := lookup(candidate); ok {
			return id
		}
	}
	return name
}
