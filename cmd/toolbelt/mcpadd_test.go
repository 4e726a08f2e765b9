package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPAdd: mcp add writes the server under mcpServers where the file
// has them, after the others, leaving every other line (comments, order)
// as it was; it starts it, as mcp servers does, and says how that went. A
// name in use is refused; --url with --header adds an HTTP server; a
// file without mcpServers gets them at its end.
func TestMCPAdd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	before := "# my servers\nmcpServers:\n  # kept as it is\n  other:\n    command: other-server\n    disabled: true\n\n# the tools\ntools:\n  profile: coding   # for now\n"
	must(t, os.WriteFile(cfg, []byte(before), 0o644))
	empty := filepath.Join(dir, "empty.yaml")
	must(t, os.WriteFile(empty, nil, 0o644))
	r := runCLI(t, "", "mcp", "add", "--config", cfg, "self", "--env", cliEnv+"=1", "--",
		os.Args[0], "--config", empty, "--data", filepath.Join(dir, "data"), "mcp", "--workspace", dir).expect(t, 0)
	if !strings.Contains(r.stdout, "Added the MCP server self to "+cfg) || !strings.Contains(r.stdout, "self started: ") || !strings.Contains(r.stdout, "offered as self__TOOL") {
		t.Errorf("stdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	entry := "  self:\n    command: " + os.Args[0] + "\n    args:\n      - --config\n      - " + empty + "\n      - --data\n      - " + filepath.Join(dir, "data") + "\n      - mcp\n      - --workspace\n      - " + dir + "\n    env:\n      " + cliEnv + ": \"1\"\n"
	want := strings.Replace(before, "\n\n# the tools", "\n"+entry+"\n# the tools", 1)
	if b, _ := os.ReadFile(cfg); string(b) != want {
		t.Errorf("toolbelt.yaml:\n%s\nwant:\n%s", b, want)
	}
	r = runCLI(t, "", "mcp", "add", "--config", cfg, "self", "--", "x").expect(t, 2)
	if !strings.Contains(r.stderr, cfg+":7: there is an MCP server self already") {
		t.Errorf("stderr: %s", r.stderr)
	}
	runCLI(t, "", "mcp", "add", "--config", cfg, "gh", "--url", "https://api.githubcopilot.com/mcp/", "--header", "Authorization=Bearer ${GITHUB_PAT}", "--no-check").expect(t, 0)
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), entry+"  gh:\n    url: https://api.githubcopilot.com/mcp/\n    headers:\n      Authorization: Bearer ${GITHUB_PAT}\n\n# the tools") {
		t.Errorf("toolbelt.yaml:\n%s", b)
	}
	runCLI(t, "", "config", "check", cfg).expect(t, 0)

	// No mcpServers yet: they go at the end. A server that does not
	// start stays, and the exit code says it failed.
	bare := filepath.Join(dir, "bare.yaml")
	must(t, os.WriteFile(bare, []byte("tools:\n  profile: coding"), 0o644))
	r = runCLI(t, "", "mcp", "add", "--config", bare, "gone", "--", filepath.Join(dir, "no-such-server")).expect(t, 1)
	if !strings.Contains(r.stderr, "gone did not start (down)") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if b, _ := os.ReadFile(bare); string(b) != "tools:\n  profile: coding\n\nmcpServers:\n  gone:\n    command: "+filepath.Join(dir, "no-such-server")+"\n" {
		t.Errorf("bare.yaml:\n%s", b)
	}
	for args, want := range map[string]string{
		"gh":                                     "say how to reach gh",
		"gh --url http://h/mcp -- x":             "not both",
		"gh --header A -- x":                     "write it as NAME=VALUE",
		"gh --url http://h/mcp --env A=1":        "--env is for a stdio server",
		"bad.name --url http://h/mcp --no-check": "may use only letters",
	} {
		r := runCLI(t, "", append([]string{"mcp", "add", "--config", bare}, strings.Fields(args)...)...).expect(t, 2)
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %s", args, r.stderr)
		}
	}
}
