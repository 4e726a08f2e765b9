package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm/llmtest"
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

// TestInitModelFlags: init --provider --model --base-url tests the model
// with a real request to the server and writes model:, providers: and an
// example agent into the annotated template; the file checks and the
// agent is listed. A server that is not there is a failure that says what
// to fix, and nothing is written; --no-test writes it untested.
func TestInitModelFlags(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "ok")})
	ws := t.TempDir()
	r := runCLI(t, "", "init", ws, "--provider", "vllm", "--model", "Qwen/Qwen3-8B", "--base-url", srv.URL+"/v1").expect(t, 0)
	if !strings.Contains(r.stdout, "vllm/Qwen/Qwen3-8B answered.") {
		t.Errorf("stdout: %s", r.stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].JSON(t)["model"] != "Qwen/Qwen3-8B" {
		t.Fatalf("requests: %+v", reqs)
	}
	path := filepath.Join(ws, "toolbelt.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Which tools are offered", "\nmodel: vllm/Qwen/Qwen3-8B\n", "\nproviders:\n  vllm:\n    url: " + srv.URL + "/v1\n", "\nagents:\n  helper:\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("toolbelt.yaml lacks %q:\n%s", want, b)
		}
	}
	runCLI(t, "", "config", "check", path).expect(t, 0)
	r = runCLI(t, "", "agents", "--config", path).expect(t, 0)
	if !strings.Contains(r.stdout, "helper") || !strings.Contains(r.stdout, "vllm/Qwen/Qwen3-8B") {
		t.Errorf("agents:\n%s", r.stdout)
	}

	// Nothing listens: the failure says what to fix; nothing is written.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	ws = t.TempDir()
	r = runCLI(t, "", "init", ws, "--model", "ollama/qwen3", "--base-url", closed.URL+"/v1").expect(t, 2)
	for _, want := range []string{"ollama/qwen3 did not answer", "Nothing answered at " + closed.URL + "/v1: start the server ('ollama serve')", "--no-test"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "toolbelt.yaml")); err == nil {
		t.Error("toolbelt.yaml written after a failed test")
	}
	runCLI(t, "", "init", ws, "--model", "ollama/qwen3", "--base-url", closed.URL+"/v1", "--no-test").expect(t, 0)
	runCLI(t, "", "config", "check", filepath.Join(ws, "toolbelt.yaml")).expect(t, 0)

	// An unknown model is named, with how to get it.
	missing := llmtest.New(t, llmtest.Response{Status: 404, Body: `{"error":{"message":"model \"qwen9\" not found, try pulling it first"}}`})
	r = runCLI(t, "", "init", t.TempDir(), "--provider", "ollama", "--model", "qwen9", "--base-url", missing.URL+"/v1").expect(t, 2)
	if !strings.Contains(r.stdout, `does not know the model "qwen9": 'ollama pull qwen9' fetches it`) {
		t.Errorf("stdout: %s", r.stdout)
	}
	for args, want := range map[string]string{
		"--provider antropic --model m": `did you mean "anthropic"?`,
		"--provider anthropic":          "--provider anthropic needs the model",
		"--model qwen3":                 "need the provider",
	} {
		r := runCLI(t, "", append([]string{"init", t.TempDir(), "--no-test"}, strings.Fields(args)...)...).expect(t, 2)
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %s", args, r.stderr)
		}
	}
}

// modelList is a local server's answer to GET /v1/models.
var modelList = llmtest.Response{Header: map[string]string{"Content-Type": "application/json"}, Body: `{"object": "list", "data": [{"id": "qwen3"}, {"id": "gemma3"}]}`}

// TestInitAsks: at a terminal, init asks for the provider, the server's
// address and the model — for a local server, one of the models it lists
// (GET /v1/models; Ollama's /api/tags when that fails), or any name when
// the list cannot be read, saying why — tests them, and writes them; a
// failed test asks whether to write the model all the same.
func TestInitAsks(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, modelList, llmtest.Response{Body: llmtest.Chat("", "ok")})
	ws := t.TempDir()
	cmd := exec.Command(os.Args[0], "init", ws)
	cmd.Env = cliEnvironment(t)
	code, screen := atTerminal(t, cmd,
		[2]string{"Provider (a number or a name) [1]: ", "llamacpp"},
		[2]string{"Base URL of the llamacpp server [http://localhost:8080/v1]: ", srv.URL + "/v1"},
		[2]string{"Model (a number or a name) [1]: ", "2"})
	screen = strings.ReplaceAll(screen, "\r\n", "\n")
	if code != 0 || !strings.Contains(screen, "Models at "+srv.URL+"/v1:\n   1  gemma3\n   2  qwen3\n") || !strings.Contains(screen, "llamacpp/qwen3 answered.") || !strings.Contains(screen, "1  ollama            http://localhost:11434/v1") {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	b, err := os.ReadFile(filepath.Join(ws, "toolbelt.yaml"))
	if err != nil || !strings.Contains(string(b), "\nmodel: llamacpp/qwen3\n") || !strings.Contains(string(b), "url: "+srv.URL+"/v1\n") {
		t.Fatalf("%v\n%s", err, b)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Method != http.MethodGet || reqs[0].Path != "/v1/models" || reqs[1].Path != "/v1/chat/completions" {
		t.Errorf("requests: %+v", reqs)
	}

	// Ollama without /v1/models: its /api/tags lists them.
	srv = llmtest.New(t, llmtest.Response{Status: http.StatusNotFound, Body: `404 page not found`},
		llmtest.Response{Header: map[string]string{"Content-Type": "application/json"}, Body: `{"models": [{"name": "llama3.2:3b"}, {"name": "qwen3:8b"}]}`},
		llmtest.Response{Body: llmtest.Chat("", "ok")})
	ws = t.TempDir()
	cmd = exec.Command(os.Args[0], "init", ws, "--provider", "ollama")
	cmd.Env = cliEnvironment(t)
	code, screen = atTerminal(t, cmd,
		[2]string{"[http://localhost:11434/v1]: ", srv.URL + "/v1"},
		[2]string{"Model (a number or a name) [1]: ", ""})
	if b, _ := os.ReadFile(filepath.Join(ws, "toolbelt.yaml")); code != 0 || !strings.Contains(string(b), "\nmodel: ollama/llama3.2:3b\n") {
		t.Fatalf("exit %d:\n%s\n%s", code, screen, b)
	}
	if reqs := srv.Requests(); len(reqs) != 3 || reqs[0].Path != "/v1/models" || reqs[1].Path != "/api/tags" || reqs[1].Method != http.MethodGet {
		t.Errorf("requests: %+v", reqs)
	}

	// Nothing answers: the list cannot be read (said in a line), the model
	// is asked for by name; a failed test, written all the same.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	ws = t.TempDir()
	cmd = exec.Command(os.Args[0], "init", ws, "--provider", "ollama")
	cmd.Env = cliEnvironment(t)
	code, screen = atTerminal(t, cmd,
		[2]string{"[http://localhost:11434/v1]: ", closed.URL + "/v1"},
		[2]string{"e.g. qwen3): ", "qwen3"},
		[2]string{"Write it all the same? [y/N]: ", "y"})
	if b, _ := os.ReadFile(filepath.Join(ws, "toolbelt.yaml")); code != 0 || !strings.Contains(screen, "Could not list the models at "+closed.URL+"/v1 (Get ") || !strings.Contains(screen, "Nothing answered at") || !strings.Contains(string(b), "model: ollama/qwen3") {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	ws = t.TempDir()
	cmd = exec.Command(os.Args[0], "init", ws)
	cmd.Env = cliEnvironment(t)
	code, screen = atTerminal(t, cmd, [2]string{"Provider (a number or a name) [1]: ", "0"})
	if b, _ := os.ReadFile(filepath.Join(ws, "toolbelt.yaml")); code != 0 || strings.Contains(string(b), "\nmodel:") || !strings.Contains(string(b), "tools:") {
		t.Fatalf("exit %d:\n%s\n%s", code, screen, b)
	}
}

// TestInitClients: --client writes each client's configuration in its
// own shape, merged into the file that is there (other servers and keys
// kept; a file that is not JSON refused), and each shape loads back
// through Toolbelt's paste-in import as a stdio server that runs toolbelt
// mcp for the workspace.
func TestInitClients(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	env := cliEnvironment(t)
	configHome := filepath.Join(t.TempDir(), "xdg")
	env = append(env, "XDG_CONFIG_HOME="+configHome)
	desktop := filepath.Join(configHome, "Claude", "claude_desktop_config.json")
	must(t, os.MkdirAll(filepath.Dir(desktop), 0o755))
	must(t, os.WriteFile(desktop, []byte(`{"globalShortcut":"Ctrl+Space","mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}}}`), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".vscode", "mcp.json"), []byte(`{"servers":{"fetch":{"type":"stdio","command":"uvx","args":["mcp-server-fetch"]}},"inputs":[]}`), 0o644))
	r := runCLIWith(t, env, "", "", "init", ws, "--client", "claude-code,claude-desktop", "--client", "cursor", "--client", "vscode").expect(t, 0)
	for file, shape := range map[string]struct {
		key, other string
		typed      bool
	}{
		filepath.Join(ws, ".mcp.json"):           {"mcpServers", "", true},
		desktop:                                  {"mcpServers", "memory", false},
		filepath.Join(ws, ".cursor", "mcp.json"): {"mcpServers", "", true},
		filepath.Join(ws, ".vscode", "mcp.json"): {"servers", "fetch", true},
	} {
		if !strings.Contains(r.stdout, "Wrote "+file+": ") {
			t.Errorf("stdout lacks %s:\n%s", file, r.stdout)
		}
		b, err := os.ReadFile(file)
		must(t, err)
		var doc map[string]json.RawMessage
		must(t, json.Unmarshal(b, &doc))
		var servers map[string]map[string]any
		must(t, json.Unmarshal(doc[shape.key], &servers))
		if _, typed := servers["toolbelt"]["type"]; typed != shape.typed || shape.other != "" && servers[shape.other] == nil {
			t.Errorf("%s:\n%s", file, b)
		}
		cfg, err := config.Parse(filepath.Join(ws, "toolbelt.yaml"), append([]byte("mcpServers: "), doc[shape.key]...))
		if err != nil {
			t.Fatalf("%s does not paste in: %v", file, err)
		}
		tb := cfg.MCPServers["toolbelt"]
		if tb.Transport() != config.TransportStdio || tb.Command == "" || !slices.Equal(tb.Args[len(tb.Args)-3:], []string{"mcp", "--workspace", ws}) {
			t.Errorf("%s pastes in as %+v", file, tb)
		}
	}
	if b, _ := os.ReadFile(desktop); !strings.Contains(string(b), `"globalShortcut": "Ctrl+Space"`) {
		t.Errorf("Claude Desktop's other settings are lost:\n%s", b)
	}
	// Not JSON: refused, and nothing is written.
	must(t, os.WriteFile(filepath.Join(ws, ".cursor", "mcp.json"), []byte("{broken"), 0o644))
	must(t, os.Remove(filepath.Join(ws, "toolbelt.yaml")))
	r = runCLIWith(t, env, "", "", "init", ws, "--client", "cursor", "--force").expect(t, 2)
	if !strings.Contains(r.stderr, "is not valid JSON") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "toolbelt.yaml")); err == nil {
		t.Error("toolbelt.yaml written beside a refused client file")
	}
	r = runCLIWith(t, env, "", "", "init", ws, "--client", "cursr").expect(t, 2)
	if !strings.Contains(r.stderr, `did you mean "cursor"?`) {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
