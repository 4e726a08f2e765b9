package config

import (
	"strings"
	"testing"
)

// TestSummariesConfig reads tools.summaries and mcpServers.<name>.summaries
// (the lines compact mode lists tools by) and refuses a shape that is not a
// mapping of names to text.
func TestSummariesConfig(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte(`tools:
  summaries:
    exec: Run a shell command in the workspace.
    github__create_issue: Open an issue.
  exec: {timeoutSeconds: 5}
mcpServers:
  github:
    command: github-mcp-server
    summaries:
      create_issue: Open an issue on a GitHub repository.
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tools.Summaries; len(got) != 2 || got["exec"] != "Run a shell command in the workspace." {
		t.Errorf("tools.summaries = %v", got)
	}
	if _, ok := c.Tools.Settings["summaries"]; ok {
		t.Error("tools.summaries is taken for a tool's settings")
	}
	if got := c.MCPServers["github"].Summaries["create_issue"]; got != "Open an issue on a GitHub repository." {
		t.Errorf("mcpServers.github.summaries.create_issue = %q", got)
	}
	for name, tc := range map[string]struct{ yaml, want string }{
		"a list":       {"tools:\n  summaries: [exec]\n", "tools.summaries"},
		"a nested map": {"tools:\n  summaries:\n    exec: {text: run}\n", "tools.summaries.exec"},
		"server list":  {"mcpServers:\n  gh:\n    command: x\n    summaries: [a]\n", "mcpServers.gh.summaries"},
	} {
		_, err := Parse("toolbelt.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to name %s", name, err, tc.want)
		}
	}
}
