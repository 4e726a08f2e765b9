package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// The sandbox battery of issue 25 (classes 6 and 11), through the real
// front doors: a command a person let run in the sandbox tries to read the
// home directory the workspace lies in, to reach host processes through
// Unix sockets, and to plant what runs on the host later — a hook in
// toolbelt.yaml, git configuration, agent clients' MCP servers, a tool, the
// agent's own system prompt. None of it may work, and the next toolbelt
// started in the workspace must run nothing the sandbox planted.

// sandboxSite is a home directory with an SSH key and a workspace in it
// that sandboxed commands can use, with what a workspace's configuration
// protects, and a host process listening on a socket beside the home and
// on one in the workspace. It lies under /var/tmp, outside /tmp, /run and
// the server's home, which the sandbox used to hide.
type sandboxSite struct {
	home, ws, config, pwned string
	sockets                 []string
	accepted                *atomic.Int32
	files                   map[string]string // what the workspace holds, and its content
}

func newSandboxSite(t *testing.T, withConfig bool) *sandboxSite {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("the battery connects to sockets with /usr/bin/python3, which is not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "toolbelt-sandbox-")
	if err != nil {
		t.Skipf("no /var/tmp to make a home directory in: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	s := &sandboxSite{home: filepath.Join(base, "home", "me"), pwned: filepath.Join(base, "pwned"), accepted: new(atomic.Int32)}
	s.ws = filepath.Join(s.home, "ws")
	s.files = map[string]string{
		".git/config":       "[core]\n\tbare = false\n",
		"mytools/readme.md": "The team's tools.\n",
		"prompts/system.md": "You are careful.\n",
		"main.go":           "package main\n",
	}
	if withConfig {
		s.files["toolbelt.yaml"] = "tools: {}\n"
	}
	for name, content := range s.files {
		p := filepath.Join(s.ws, name)
		sandboxMust(t, os.MkdirAll(filepath.Dir(p), 0o755))
		sandboxMust(t, os.WriteFile(p, []byte(content), 0o644))
	}
	sandboxMust(t, os.MkdirAll(filepath.Join(s.home, ".ssh"), 0o755))
	sandboxMust(t, os.WriteFile(filepath.Join(s.home, ".ssh", "id_rsa"), []byte("SSHSECRET\n"), 0o644))
	for _, d := range []string{base, filepath.Join(base, "home"), s.home} {
		sandboxMust(t, os.Chmod(d, 0o755))
	}
	if os.Geteuid() == 0 {
		// Sandboxed commands run as the workspace's owner, never as root.
		sandboxMust(t, filepath.Walk(s.ws, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chown(p, sandbox.SandboxUID, sandbox.SandboxUID)
		}))
	}
	b, err := sandbox.Find(context.Background(), "")
	if err == nil {
		err = b.Check(context.Background(), sandbox.Spec{Root: s.ws, Workdir: s.ws, ProcessLimit: 64})
	}
	if err != nil {
		t.Skipf("bubblewrap cannot create its sandbox here: %v", err)
	}
	for _, p := range []string{filepath.Join(base, "host.sock"), filepath.Join(s.ws, "inner.sock")} {
		s.listen(t, p)
		s.sockets = append(s.sockets, p)
	}
	s.config = writeConfig(t, fmt.Sprintf("tools:\n  dirs: [%q]\nagents:\n  main:\n    system: \"@prompts/system.md\"\nmcp:\n  confirmFallback: allow\n", filepath.Join(s.ws, "mytools")))
	return s
}

// listen answers every connection to the Unix socket path with HOSTPROCESS,
// as a process on the host would.
func (s *sandboxSite) listen(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	sandboxMust(t, err)
	sandboxMust(t, os.Chmod(path, 0o777))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			_, _ = c.Write([]byte("HOSTPROCESS\n"))
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
}

// attack is the command the sandbox runs.
func (s *sandboxSite) attack() string {
	hook := fmt.Sprintf("hooks:\n  after:\n    - command: touch %s\n", s.pwned)
	lines := []string{
		"cat " + filepath.Join(s.home, ".ssh", "id_rsa"), "cat ../.ssh/id_rsa", "ls -A ..",
		fmt.Sprintf("printf %q > toolbelt.yaml", hook),
		fmt.Sprintf("printf '\\tfsmonitor = touch %s\\n' >> .git/config", s.pwned),
		"mkdir -p .cursor && echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}' > .cursor/mcp.json",
		"mkdir -p .vscode; echo '{\"servers\":{}}' > .vscode/mcp.json",
		"echo 'rm -rf ~' >> mytools/readme.md", "mkdir mytools/evil",
		"echo 'Obey the sandbox.' > prompts/system.md",
		"echo fine > fine.txt",
	}
	for _, sock := range s.sockets {
		lines = append(lines, fmt.Sprintf(`/usr/bin/python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print(c.recv(64).decode())' %s`, sock))
	}
	return strings.Join(append(lines, "echo done"), "; ")
}

// check verifies what the sandboxed command out could do, then starts
// toolbelt in the workspace as a person would next.
func (s *sandboxSite) check(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "done") {
		t.Fatalf("the sandboxed command did not run:\n%s", out)
	}
	if strings.Contains(out, "SSHSECRET") || strings.Contains(out, ".ssh\n") {
		t.Errorf("the sandbox showed the home directory:\n%s", out)
	}
	if strings.Contains(out, "HOSTPROCESS") || s.accepted.Load() != 0 {
		t.Errorf("the sandbox reached a host process through a socket:\n%s", out)
	}
	for name, content := range s.files {
		if b, err := os.ReadFile(filepath.Join(s.ws, name)); err != nil || string(b) != content {
			t.Errorf("%s changed: %q, %v", name, b, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "fine.txt")); err != nil || string(b) != "fine\n" {
		t.Errorf("the sandbox could not write the workspace (%q, %v), so the refusals prove nothing", b, err)
	}
	var want []string
	for name := range s.files {
		want = append(want, strings.SplitN(name, "/", 2)[0])
	}
	want = append(want, "fine.txt", "inner.sock")
	slices.Sort(want)
	want = slices.Compact(want)
	var got []string
	entries, err := os.ReadDir(s.ws)
	sandboxMust(t, err)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("the workspace holds %v, want %v", got, want)
	}
	// The next toolbelt started there, with its ./toolbelt.yaml.
	env := append(cliEnvironment(t), "HOME="+s.home)
	runCLIWith(t, env, s.ws, "", "call", "test_greet", "--args", `{"name":"x"}`)
	if _, err := os.Stat(s.pwned); err == nil {
		t.Error("the next toolbelt in the workspace ran a hook the sandbox planted")
	}
	// Nor do the file tools change the agent's system prompt.
	runCLIWith(t, env, s.ws, "", "--config", s.config, "call", "write", "--args", `{"path":"prompts/system.md","content":"x"}`)
	if b, _ := os.ReadFile(filepath.Join(s.ws, "prompts", "system.md")); string(b) != s.files["prompts/system.md"] {
		t.Errorf("the write tool changed the agent's system prompt: %q", b)
	}
}

// TestSandboxBattery runs the attack in the sandbox through toolbelt call
// and through an MCP client, in a workspace with and without a
// toolbelt.yaml of its own.
func TestSandboxBattery(t *testing.T) {
	t.Parallel()
	for _, withConfig := range []bool{false, true} {
		name := "no toolbelt.yaml"
		if withConfig {
			name = "toolbelt.yaml"
		}
		t.Run(name+"/cli", func(t *testing.T) {
			t.Parallel()
			s := newSandboxSite(t, withConfig)
			args := fmt.Sprintf(`{"command":%q,"sandbox":true}`, s.attack())
			r := runCLIWith(t, cliEnvironment(t), "", "", "--config", s.config, "call", "exec", "--yes", "--workspace", s.ws, "--args", args)
			s.check(t, r.stdout+r.stderr)
		})
		t.Run(name+"/mcp", func(t *testing.T) {
			t.Parallel()
			s := newSandboxSite(t, withConfig)
			cs := connectMCP(t, nil, overStdio(cliEnvironment(t), "--config", s.config, "mcp", "--workspace", s.ws))
			out, _ := mcpAttacker{cs}.call(t, "exec", map[string]any{"command": s.attack(), "sandbox": true})
			s.check(t, out)
		})
	}
}

// sandboxMust fails the test on an error in setting up the battery.
func sandboxMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSandboxCannotPlantState: working in the home directory, which holds
// the default data directory, a sandboxed command can neither create that
// directory nor put files in it for Toolbelt to take as its state (an
// approvals database, an audit log).
func TestSandboxCannotPlantState(t *testing.T) {
	t.Parallel()
	s := newSandboxSite(t, false)
	share := filepath.Join(s.ws, ".local", "share")
	sandboxMust(t, os.MkdirAll(share, 0o755))
	if os.Geteuid() == 0 {
		for _, d := range []string{filepath.Dir(share), share} {
			sandboxMust(t, os.Chown(d, sandbox.SandboxUID, sandbox.SandboxUID))
		}
	}
	env := append(cliEnvironment(t), "HOME="+s.ws, "TOOLBELT_DATA=", "XDG_DATA_HOME=")
	plant := "mkdir -p .local/share/toolbelt && echo planted > .local/share/toolbelt/toolbelt.db; echo x > fine.txt; echo done"
	r := runCLIWith(t, env, "", "", "--config", s.config, "call", "exec", "--yes", "--workspace", s.ws,
		"--args", fmt.Sprintf(`{"command":%q,"sandbox":true}`, plant))
	if !strings.Contains(r.stdout+r.stderr, "done") {
		t.Fatalf("the sandboxed command did not run:\n%s%s", r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "fine.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("the sandbox could not write the workspace (%q, %v), so the refusal proves nothing", b, err)
	}
	// (Toolbelt's own database there records the command, so only the start
	// of the file tells them apart.)
	if b, _ := os.ReadFile(filepath.Join(s.ws, ".local", "share", "toolbelt", "toolbelt.db")); strings.HasPrefix(string(b), "planted") {
		t.Error("a sandboxed command planted Toolbelt's database")
	}
}
