package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestPasteIn: the mcpServers entries of Claude Code, Claude Desktop,
// Cursor and VS Code (testdata/clients, each in its client's own file),
// pasted under mcpServers: as they are written, load and mean what they
// mean there: type (or command, or url) says the transport, headers and
// env are kept for ${…} to be expanded when the server starts, and envFile
// is relative to the configuration file.
func TestPasteIn(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "clients")
	type want struct{ transport, target, header, env, envFile string }
	for file, servers := range map[string]map[string]want{
		"claude-code.mcp.json": {
			"filesystem": {transport: "stdio", target: "npx", env: "LOG_LEVEL=${LOG_LEVEL:-info}"},
			"github":     {transport: "http", target: "https://api.githubcopilot.com/mcp/", header: "Authorization=Bearer ${GITHUB_PAT}"},
			"asana":      {transport: "sse", target: "https://mcp.asana.com/sse"},
		},
		"claude_desktop_config.json": {
			"memory": {transport: "stdio", target: "npx", env: "MEMORY_FILE_PATH=/home/me/memory.json"},
		},
		"cursor.mcp.json": {
			"server-name":   {transport: "stdio", target: "npx", env: "API_KEY=${env:API_KEY}", envFile: "cursor.env"},
			"remote-server": {transport: "http", target: "http://localhost:3000/mcp", header: "API_KEY=${env:API_KEY}"},
		},
		"vscode.mcp.json": {
			"fetch":  {transport: "stdio", target: "uvx", envFile: "vscode.env"},
			"github": {transport: "http", target: "https://api.githubcopilot.com/mcp", header: "Authorization=Bearer ${env:GITHUB_TOKEN}"},
			"legacy": {transport: "sse", target: "http://127.0.0.1:8931/sse"},
		},
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		must(t, err)
		var doc struct{ MCPServers, Servers json.RawMessage } // VS Code says servers
		must(t, json.Unmarshal(data, &doc))
		entries := doc.MCPServers
		if entries == nil {
			entries = doc.Servers
		}
		cfg, err := Parse(filepath.Join(dir, FileName), append([]byte("mcpServers: "), entries...))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if len(cfg.MCPServers) != len(servers) {
			t.Errorf("%s: %d servers, want %d", file, len(cfg.MCPServers), len(servers))
		}
		for name, w := range servers {
			srv := cfg.MCPServers[name]
			target := srv.Command
			if srv.Transport() != TransportStdio {
				target = srv.URL
			}
			if srv.Transport() != w.transport || target != w.target {
				t.Errorf("%s: %s is %s %s, want %s %s", file, name, srv.Transport(), target, w.transport, w.target)
			}
			for _, kv := range []struct {
				what, want string
				m          map[string]string
			}{{"header", w.header, srv.Headers}, {"env", w.env, srv.Env}} {
				if kv.want == "" {
					continue
				}
				if got := only(kv.m); got != kv.want {
					t.Errorf("%s: %s's %s is %q, want %q", file, name, kv.what, got, kv.want)
				}
			}
			if w.envFile == "" {
				continue
			}
			if srv.EnvFile != filepath.Join(dir, w.envFile) {
				t.Errorf("%s: %s's envFile is %q, want it beside the configuration", file, name, srv.EnvFile)
			}
			if env, err := ReadEnvFile(srv.EnvFile); err != nil || len(env) == 0 {
				t.Errorf("%s: %s's envFile: %v %v", file, name, env, err)
			}
		}
	}
}

// only returns the one entry of m as NAME=value.
func only(m map[string]string) string {
	for k, v := range m {
		if len(m) == 1 {
			return k + "=" + v
		}
	}
	return ""
}

// TestReadEnvFile: comments, export and quotes as .env files write them.
func TestReadEnvFile(t *testing.T) {
	t.Parallel()
	env, err := ReadEnvFile(filepath.Join("testdata", "clients", "cursor.env"))
	if err != nil || len(env) != 2 || env["API_KEY"] != "from-file" || env["REGION"] != "eu" {
		t.Errorf("%v %v", env, err)
	}
	if _, err := ReadEnvFile(filepath.Join("testdata", "bad.env")); err == nil || err.Error() != "testdata/bad.env:3: not NAME=value" {
		t.Errorf("bad line: %v", err)
	}
}
