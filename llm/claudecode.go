package llm

import (
	"encoding/json"
	"strings"
)

// Anthropic OAuth (subscription) sessions: a Claude Pro/Max token
// (sk-ant-oat…) is accepted only in requests shaped as Claude Code sends
// them — Bearer authorization, Claude Code's beta flags and identity, and
// Claude Code's tool names. The names are mapped for one request: out as
// Claude Code's, back as Toolbelt's.

// oauthKeyPrefix starts the OAuth access tokens of Claude subscriptions.
const oauthKeyPrefix = "sk-ant-oat"

// claudeCodeVersion is the Claude Code release the requests say they come from.
const claudeCodeVersion = "2.1.2"

// claudeCodeIdentity is the system prompt's first block in an OAuth session.
const claudeCodeIdentity = "You are Claude Code, Anthropic's official CLI for Claude."

// claudeCodeBetas are the anthropic-beta flags of an OAuth session.
const claudeCodeBetas = "claude-code-20250219,oauth-2025-04-20"

// claudeCodeNames maps Toolbelt's tool names to Claude Code's for the
// tools that do the same work.
var claudeCodeNames = map[string]string{
	"read":           "Read",
	"write":          "Write",
	"edit":           "Edit",
	"exec":           "Bash",
	"grep":           "Grep",
	"find":           "Glob",
	"ls":             "LS",
	"web_fetch":      "WebFetch",
	"web_search":     "WebSearch",
	"todo_write":     "TodoWrite",
	"sessions_spawn": "Task",
}

// claudeCodeTools are Claude Code's own tool names: a tool named one of
// them in another case goes out in Claude Code's case.
var claudeCodeTools = []string{"Read", "Write", "Edit", "MultiEdit", "Bash", "Grep", "Glob", "LS",
	"WebFetch", "WebSearch", "TodoWrite", "Task", "NotebookEdit", "AskUserQuestion", "Skill"}

// claudeCodeName returns Claude Code's name for a tool, or name itself.
func claudeCodeName(name string) string {
	if n, ok := claudeCodeNames[name]; ok {
		return n
	}
	for _, n := range claudeCodeTools {
		if strings.EqualFold(n, name) {
			return n
		}
	}
	return name
}

// wireNames returns, for the tools of an Anthropic tool list, the name each
// goes out as when it differs from its own. Two tools never share a wire
// name: a tool whose Claude Code name another tool already has keeps its own.
func wireNames(tools json.RawMessage) map[string]string {
	var list []struct {
		Name string `json:"name"`
	}
	if len(tools) == 0 || json.Unmarshal(tools, &list) != nil {
		return nil
	}
	taken := map[string]bool{}
	for _, t := range list {
		taken[t.Name] = true
	}
	out := map[string]string{}
	for _, t := range list {
		w := claudeCodeName(t.Name)
		if w == t.Name || taken[w] {
			continue
		}
		taken[w] = true
		out[t.Name] = w
	}
	return out
}

// renameTools returns an Anthropic tool list with the tools renamed by names.
func renameTools(tools json.RawMessage, names map[string]string) json.RawMessage {
	if len(names) == 0 {
		return tools
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(tools, &list) != nil {
		return tools
	}
	for _, t := range list {
		var name string
		if json.Unmarshal(t["name"], &name) != nil {
			continue
		}
		if w, ok := names[name]; ok {
			t["name"], _ = json.Marshal(w)
		}
	}
	b, err := json.Marshal(list)
	if err != nil {
		return tools
	}
	return b
}

// invert returns the map from wire names back to the tools' own.
func invert(names map[string]string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]string, len(names))
	for k, v := range names {
		out[v] = k
	}
	return out
}
