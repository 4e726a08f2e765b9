package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestInitWritesAConfigThatChecks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := runCLI(t, "", "init", ws).expect(t, 0)
	path := filepath.Join(ws, "toolbelt.yaml")
	if !strings.Contains(r.stdout, "Wrote "+path) {
		t.Errorf("stdout: %s", r.stdout)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "# ") || !strings.Contains(string(b), "tools:") {
		t.Errorf("not annotated:\n%s", b)
	}
	r = runCLI(t, "", "config", "check", path).expect(t, 0)
	if !strings.Contains(r.stdout, "Checking "+path) || !strings.Contains(r.stdout, path+": ok") || strings.Contains(r.stdout, "warning") {
		t.Errorf("config check:\n%s%s", r.stdout, r.stderr)
	}
	// No overwrite without --force; nothing changes.
	if err := os.WriteFile(path, []byte("workspace: .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "init", ws).expect(t, 2)
	if !strings.Contains(r.stderr, "already exists") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "workspace: .\n" {
		t.Errorf("overwritten without --force: %s", b)
	}
	runCLI(t, "", "init", ws, "--force").expect(t, 0)
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "confirm:") {
		t.Errorf("not overwritten with --force: %s", b)
	}
	runCLI(t, "", "init", filepath.Join(ws, "missing")).expect(t, 2)
}

// TestInitMCPJSON: the .mcp.json names this executable by its absolute
// path, and an MCP client can start the server from it exactly as written.
func TestInitMCPJSON(t *testing.T) {
	t.Parallel()
	// Test binaries live under go-build, like `go run`'s; a copy elsewhere
	// stands for an installed toolbelt.
	bin := filepath.Join(t.TempDir(), "toolbelt")
	copyFile(t, os.Args[0], bin)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers":{"other":{"command":"other-server"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "init", "--mcp-json", ws)
	cmd.Env = cliEnvironment(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(ws, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	srv := doc.MCPServers["toolbelt"]
	if srv.Command != bin || !slices.Equal(srv.Args, []string{"mcp", "--workspace", ws}) || doc.MCPServers["other"].Command != "other-server" {
		t.Fatalf(".mcp.json:\n%s", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := exec.Command(srv.Command, srv.Args...)
	start.Env = cliEnvironment(t)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mcp-json-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: start}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// A second run refuses to replace the entry without --force.
	again := exec.Command(bin, "init", "--mcp-json", "--force", ws)
	again.Env = cliEnvironment(t)
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("--force: %v\n%s", err, out)
	}
	r := runCLI(t, "", "init", "--mcp-json", "--force", ws).expect(t, 0)
	_ = r
	if err := os.Remove(filepath.Join(ws, "toolbelt.yaml")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "init", "--mcp-json", ws).expect(t, 2)
	if !strings.Contains(r.stderr, "already has a toolbelt server") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Link(from, to); err == nil {
		return
	}
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigShow(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cfgPath := filepath.Join(ws, "toolbelt.yaml")
	if err := os.WriteFile(cfgPath, []byte("limits:\n  timeout: 30s\nmcp:\n  token: s3cret\ntools:\n  deny: [web_fetch]\n  exec:\n    defaultTimeout: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "config", "show", "--config", cfgPath, "--workspace", ws).expect(t, 0)
	for _, want := range []string{
		"# file:        " + cfgPath + "\n",
		"# workspace:   " + ws + "\n",
		"# state:       ",
		"  timeout: 30s\n",                  // from the file
		"  maxTimeout: 1h\n",                // a default
		"  onTimeout: deny\n",               // a default
		"  token: (set)\n",                  // never the secret
		"  exec:\n    defaultTimeout: 20\n", // tool settings under tools:
		"  - web_fetch\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config show lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "s3cret") {
		t.Errorf("config show prints the token:\n%s", r.stdout)
	}
	r = runCLI(t, "", "config", "show", "--json").expect(t, 0)
	var got struct {
		Sources []configSource `json:"sources"`
		Config  map[string]any `json:"config"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got.Sources) == 0 || !strings.HasPrefix(got.Sources[0].From, "none: the defaults") || got.Config["limits"].(map[string]any)["timeout"] != "5m" {
		t.Errorf("%+v", got)
	}
}

func TestConfigCheckWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "toolbelt.yaml")
	yaml := `mcpServers:
  gh:
    command: no-such-server-xyz
    env:
      TOKEN: ${TOOLBELT_TEST_UNSET_VAR}
  off:
    command: also-missing
    disabled: true
tools:
  exec:
    shell: /nonexistent/bash
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "config", "check", path).expect(t, 0)
	for _, want := range []string{
		"Checking " + path,
		"warning: " + path + `:5:14: mcpServers.gh.env.TOKEN refers to ${TOOLBELT_TEST_UNSET_VAR}, which is not set`,
		"warning: " + path + `:3:14: mcpServers.gh.command "no-such-server-xyz" is not found`,
		"warning: " + path + `:11:12: tools.exec.shell "/nonexistent/bash" is not found`,
		path + ": ok, 3 warnings",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "also-missing") {
		t.Errorf("a disabled server is checked:\n%s", r.stdout)
	}
	r = runCLI(t, "", "config", "check").expect(t, 0)
	if !strings.Contains(r.stdout, "No configuration file (looked for $TOOLBELT_CONFIG, ./toolbelt.yaml") {
		t.Errorf("%s", r.stdout)
	}
}

// TestStdioCommandUnderGoRun: a binary under go-build (as go run and go
// test make) is not named. The toolbelt installed in PATH is; without one,
// go run of the module by absolute paths, and an MCP client starts the
// server with that command line as written; without go either, "toolbelt"
// with a note that says how to install it. Not parallel: it sets PATH.
func TestStdioCommandUnderGoRun(t *testing.T) {
	if !isGoRunBinary(os.Args[0]) {
		t.Skip("the test binary is not in a go-build directory")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	argv, note := stdioCommand()
	if !slices.Equal(argv, []string{"toolbelt"}) || !strings.Contains(note, "go install github.com/toolbelt/toolbelt/cmd/toolbelt@latest") {
		t.Errorf("without toolbelt or go in PATH: %q, %q", argv, note)
	}

	t.Setenv("PATH", bin+string(os.PathListSeparator)+filepath.Dir(goBin))
	argv, note = stdioCommand()
	goAbs, _ := filepath.Abs(goBin)
	if !slices.Equal(argv, []string{goAbs, "run", "-C", root, "./cmd/toolbelt"}) || !strings.Contains(note, "go install") {
		t.Fatalf("with go in PATH: %q, %q", argv, note)
	}
	if err := os.WriteFile(filepath.Join(bin, "toolbelt"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if argv, note := stdioCommand(); !slices.Equal(argv, []string{filepath.Join(bin, "toolbelt")}) || note != "" {
		t.Errorf("with an installed toolbelt: %q, %q", argv, note)
	}
	// The command line works as written, from another directory. (With
	// the usual PATH: without a C compiler go would build every package
	// anew, with cgo off.)
	if testing.Short() {
		t.Skip("-short: not compiling toolbelt with go run")
	}
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := exec.Command(argv[0], append(argv[1:], "mcp", "--workspace", ws)...)
	start.Dir = t.TempDir()
	start.Env = append(cliEnvironment(t), "PATH="+path)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-run-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: start}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestInitMCPJSONKeepsTheConfig: in a workspace that already has its
// toolbelt.yaml, init --mcp-json adds the .mcp.json and leaves the
// configuration as it was.
func TestInitMCPJSONKeepsTheConfig(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	path := filepath.Join(ws, "toolbelt.yaml")
	if err := os.WriteFile(path, []byte("workspace: .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "init", "--mcp-json", ws).expect(t, 0)
	if !strings.Contains(r.stdout, "Kept "+path) || !strings.Contains(r.stdout, "Wrote "+filepath.Join(ws, ".mcp.json")) {
		t.Errorf("stdout: %s", r.stdout)
	}
	if b, _ := os.ReadFile(path); string(b) != "workspace: .\n" {
		t.Errorf("toolbelt.yaml changed: %s", b)
	}
	b, err := os.ReadFile(filepath.Join(ws, ".mcp.json"))
	if err != nil || !strings.Contains(string(b), `"toolbelt"`) {
		t.Errorf(".mcp.json: %v %s", err, b)
	}
}
