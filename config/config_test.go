package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const full = `# Every key of toolbelt.yaml.
workspace: .
data: /var/lib/toolbelt
database: postgres://toolbelt@127.0.0.1:5432/toolbelt
limits:
  timeout: 5m
  maxTimeout: 1h
  maxResultChars: 40000
  maxResultTokens: 0
  eventMaxChars: 8000
  imageMaxSide: 1200
  imageMaxBytes: 5242880
  updateInterval: 50ms
confirm:
  medium: true
  timeout: 2m
  onTimeout: deny
tools:
  profile: coding
  allow: [group:fs, group:runtime]
  alsoAllow: [web_fetch]
  deny: [bash, "mcp__*__delete_*"]
  ask:
    - tool: exec
      when:
        command: ["rm -rf *", "git push*"]
    - tool: [write, edit]
      when: {path: ["**/.env*"]}
  byProvider:
    xai: {deny: [group:web]}
    openai/gpt-5:
      deny:
        - group:mcp:github
  exec:
    defaultTimeout: 300
agents:
  reviewer:
    tools:
      allow: [read, grep]
channels:
  discord:
    tools: {deny: [group:runtime]}
sandbox:
  tools: {deny: [process]}
subagents:
  tools: {profile: minimal}
mcpServers:
  everything:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-everything"]
    env: {DEBUG: "1"}
  remote:
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: Bearer abc}
mcp:
  addr: 127.0.0.1:7420
  compactAbove: 40
  separator: __
  owner: false
  tokens:
    - {token: "${ALICE_TOKEN}", principal: alice, owner: true}
    - {token: s3cret, principal: ci}
  maxMessageBytes: 4194304
  maxSessions: 256
  sessionIdleTimeout: 15m
  maxConnections: 512
  readHeaderTimeout: 10s
  bodyTimeout: 30s
`

func TestParseEverything(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.Timeout.D() != 5*time.Minute || c.Limits.UpdateInterval.D() != 50*time.Millisecond || !c.Confirm.Medium || c.Confirm.Timeout.D() != 2*time.Minute {
		t.Errorf("limits/confirm: %+v %+v", c.Limits, c.Confirm)
	}
	if !slices.Equal(c.Tools.Allow, []string{"group:fs", "group:runtime"}) || !slices.Equal(c.Tools.Deny, []string{"bash", "mcp__*__delete_*"}) {
		t.Errorf("allow %q deny %q", c.Tools.Allow, c.Tools.Deny)
	}
	if !slices.Equal(c.Tools.ByProvider["xai"].Deny, []string{"group:web"}) || !slices.Equal(c.Tools.ByProvider["openai/gpt-5"].Deny, []string{"group:mcp:github"}) {
		t.Errorf("byProvider %+v", c.Tools.ByProvider)
	}
	if len(c.Tools.Ask) != 2 || !slices.Equal(c.Tools.Ask[1].Tool, []string{"write", "edit"}) || c.Tools.Ask[0].When["command"][1] != "git push*" {
		t.Errorf("ask %+v", c.Tools.Ask)
	}
	if c.Tools.Settings["exec"] == nil || c.SettingLine("exec") != 34 {
		t.Errorf("settings %v at line %d", c.Tools.Settings, c.SettingLine("exec"))
	}
	if c.Agents["reviewer"].Tools.Allow[1] != "grep" || c.Channels["discord"].Tools.Deny[0] != "group:runtime" || c.Sandbox.Tools.Deny[0] != "process" || c.Subagents.Tools.Profile != "minimal" {
		t.Error("scopes")
	}
	if srv := c.MCPServers["everything"]; srv.Command != "npx" || srv.Args[1] != "@modelcontextprotocol/server-everything" || c.MCPServers["remote"].Headers["Authorization"] != "Bearer abc" || c.MCP.CompactAbove != 40 {
		t.Errorf("mcp %+v %+v", c.MCPServers, c.MCP)
	}
	if m := c.MCP; len(m.Tokens) != 2 || !m.Tokens[0].Owner || m.Tokens[1].Principal != "ci" || m.MaxSessions != 256 || m.SessionIdleTimeout.D() != 15*time.Minute || m.BodyTimeout.D() != 30*time.Second || m.MaxConnections != 512 || m.MaxMessageBytes != 4<<20 {
		t.Errorf("mcp limits and tokens %+v", m)
	}
	if got, err := c.MCP.Tokens[0].Secret(envMap{"ALICE_TOKEN": "t-a"}.get); got != "t-a" || err != nil {
		t.Errorf("token from the environment: %q %v", got, err)
	}
	if _, err := c.MCP.Tokens[0].Secret(envMap{}.get); err == nil || !strings.Contains(err.Error(), "$ALICE_TOKEN, which is not set") {
		t.Errorf("unset variable: %v", err)
	}
	if got, _ := c.MCP.Tokens[1].Secret(nil); got != "s3cret" {
		t.Errorf("literal token: %q", got)
	}
	if c.Line("$.tools.deny[1]") != 22 || c.Line("$.agents.'reviewer'.tools.allow[0]") != 39 || c.Line("$.nope") != 0 {
		t.Errorf("lines %d %d", c.Line("$.tools.deny[1]"), c.Line("$.agents.'reviewer'.tools.allow[0]"))
	}
}

func TestAgents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	c, err := Parse(filepath.Join(dir, "toolbelt.yaml"), []byte(`agents:
  main:
    name: Main
    description: Plans and delegates.
    model: anthropic/claude-sonnet-4-5
    workspace: ws
    system: "@AGENTS.md"
    tools: {profile: coding, deny: [exec]}
    subagents: {allow: [researcher], maxDepth: 2}
  researcher:
    description: Looks things up.
`))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Agents["main"]
	if m.Name != "Main" || m.Model != "anthropic/claude-sonnet-4-5" || m.Workspace != "ws" || m.System != "@AGENTS.md" ||
		m.Tools.Profile != "coding" || len(m.Tools.Deny) != 1 || m.Subagents.Depth() != 2 || m.Subagents.Concurrent() != 4 || len(m.Subagents.Allow) != 1 {
		t.Errorf("%+v", m)
	}
	if r := c.Agents["researcher"]; r.Description != "Looks things up." || r.Subagents.Depth() != 1 || len(r.Subagents.Allow) != 0 {
		t.Errorf("%+v", r)
	}
}

func TestFindAndOpen(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("TOOLBELT_CONFIG", "")
	if p, err := Find(""); err != nil || p != "" {
		t.Fatalf("no file: %q %v", p, err)
	}
	c, err := Open("")
	if err != nil || c.Path != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	user := filepath.Join(dir, "xdg", "toolbelt", FileName)
	must(t, os.MkdirAll(filepath.Dir(user), 0o755))
	must(t, os.WriteFile(user, []byte("data: /from/user\n"), 0o600))
	if p, _ := Find(""); p != user {
		t.Errorf("user config: %q", p)
	}
	must(t, os.WriteFile(FileName, []byte("data: /from/cwd\n"), 0o600))
	if c, err := Open(""); err != nil || c.Data != "/from/cwd" {
		t.Errorf("working directory first: %+v %v", c, err)
	}
	other := filepath.Join(dir, "other.yaml")
	must(t, os.WriteFile(other, []byte("data: /explicit\n"), 0o600))
	t.Setenv("TOOLBELT_CONFIG", other)
	if c, _ := Open(""); c.Data != "/explicit" {
		t.Errorf("TOOLBELT_CONFIG: %+v", c)
	}
	if c, _ := Open(user); c.Data != "/from/user" {
		t.Errorf("--config wins: %+v", c)
	}
	if _, err := Open(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing --config file is not an error")
	}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// config check warns about a token read from an unset variable.
func TestLintTokenVariables(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte("mcp:\n  tokens:\n    - {token: \"${SET_TOKEN}\", principal: a}\n    - {token: \"${UNSET_TOKEN}\", principal: b}\n"))
	must(t, err)
	env := func(k string) (string, bool) { return "x", k == "SET_TOKEN" }
	ws := c.Lint(func(string) (string, error) { return "", nil }, env)
	if len(ws) != 1 || !strings.Contains(ws[0].Error(), "mcp.tokens[1].token (b) refers to ${UNSET_TOKEN}, which is not set") || ws[0].Line != 4 {
		t.Errorf("warnings %v", ws)
	}
}

// config check warns about an embedding provider's unset key variable.
func TestLintEmbeddingKey(t *testing.T) {
	t.Parallel()
	none := func(string) (string, error) { return "", nil }
	for _, c := range []struct {
		yaml string
		env  map[string]string
		want string
	}{
		{"tools:\n  memory:\n    embeddings: {provider: openai}\n", nil, "reads the openai API key from $OPENAI_API_KEY, which is not set"},
		{"tools:\n  memory:\n    embeddings: {provider: openai}\n", map[string]string{"OPENAI_API_KEY": "k"}, ""},
		{"tools:\n  memory:\n    embeddings: {provider: gemini, apiKeyEnv: MY_KEY}\n", nil, "from $MY_KEY, which is not set"},
		{"tools:\n  memory:\n    embeddings: {provider: openai, apiKeyEnv: \"-\"}\n", nil, ""},
		{"tools:\n  memory:\n    embeddings: {provider: ollama}\n", nil, ""},
	} {
		cfg, err := Parse("toolbelt.yaml", []byte(c.yaml))
		must(t, err)
		ws := cfg.Lint(none, func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if c.want == "" && len(ws) != 0 || c.want != "" && (len(ws) != 1 || !strings.Contains(ws[0].Error(), c.want) || ws[0].Line != 3) {
			t.Errorf("%s: warnings %v, want %q", c.yaml, ws, c.want)
		}
	}
}

// TestCompactionOver: an agent's compaction overrides the top-level one
// field by field; enabled: false turns it off.
func TestCompactionOver(t *testing.T) {
	t.Parallel()
	off := false
	top := Compaction{Threshold: 0.7, KeepTurns: 6, Model: "anthropic/claude-haiku-4-5"}
	got := Compaction{KeepTurns: 2, ToolResultTurns: 1}.Over(top)
	if got.Threshold != 0.7 || got.KeepTurns != 2 || got.ToolResultTurns != 1 || got.Model != top.Model || !got.On() {
		t.Errorf("over: %+v", got)
	}
	if (Compaction{Enabled: &off}).Over(top).On() {
		t.Error("enabled: false left compaction on")
	}
}
