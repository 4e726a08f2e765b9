package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 25, class 1: a remembered approval never carries over to code the
// person has not seen. A command that may run code from the workspace —
// a build, tests, package scripts, a script read from standard input,
// piped or sourced, any program not known to run none — is approved
// "always" through a real front door; the model then rewrites the code
// with the write tool (medium risk: it runs unasked) and runs the same
// command again: it must be asked about again (and, with nobody to answer,
// blocked) — and must still run unasked while nothing changed.

// codeRoute is one way a command runs workspace code.
type codeRoute struct {
	name  string
	needs string            // a program the route needs, skipped without it
	files map[string]string // the workspace
	// alias, when set, is a git alias the repository defines.
	alias   string
	command string
	// file is what the model rewrites, with evil: code that creates
	// "pwned" in the workspace.
	file, evil string
}

var codeRoutes = []codeRoute{
	{name: "make", needs: "make", files: map[string]string{"Makefile": "t:\n\t@echo ran-1\n"},
		command: "make -s t", file: "Makefile", evil: "t:\n\t@touch pwned\n"},
	{name: "make -f", needs: "make", files: map[string]string{"build.mk": "t:\n\t@echo ran-1\n"},
		command: "make -s -f build.mk t", file: "build.mk", evil: "t:\n\t@touch pwned\n"},
	{name: "npm test", needs: "npm", files: map[string]string{"package.json": `{"name":"x","version":"1.0.0","scripts":{"test":"echo ran-1"}}`},
		command: "npm test --silent", file: "package.json", evil: `{"name":"x","version":"1.0.0","scripts":{"test":"touch pwned"}}`},
	{name: "go test", needs: "go", files: map[string]string{"go.mod": "module x\n\ngo 1.21\n",
		"x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { t.Log(\"ran-1\") }\n"},
		command: "go test -v ./...", file: "x_test.go",
		evil: "package x\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { _ = os.WriteFile(\"pwned\", nil, 0o644) }\n"},
	{name: "sh < t.sh", files: map[string]string{"t.sh": "echo ran-1\n"}, command: "sh < t.sh", file: "t.sh", evil: "touch pwned\n"},
	{name: "cat t.sh | sh", files: map[string]string{"t.sh": "echo ran-1\n"}, command: "cat t.sh | sh", file: "t.sh", evil: "touch pwned\n"},
	{name: "bash -c source", files: map[string]string{"t.sh": "echo ran-1\n"}, command: "bash -c '. ./t.sh'", file: "t.sh", evil: "touch pwned\n"},
	{name: "find -exec sh", files: map[string]string{"t.sh": "echo ran-1\n"}, command: `find . -name t.sh -exec sh {} \;`, file: "t.sh", evil: "touch pwned\n"},
	{name: "xargs sh", files: map[string]string{"t.sh": "echo ran-1\n", "list": "t.sh\n"}, command: "xargs sh < list", file: "t.sh", evil: "touch pwned\n"},
	{name: "node -e require", needs: "node", files: map[string]string{"t.js": "console.log('ran-1')\n"},
		command: `node -e 'require("./t.js")'`, file: "t.js", evil: "require('fs').writeFileSync('pwned', '')\n"},
	{name: "git alias", needs: "git", files: map[string]string{"hello.sh": "echo ran-1\n"}, alias: "!sh hello.sh",
		command: "git hello", file: "hello.sh", evil: "touch pwned\n"},
}

// alwaysEnvironment is the CLI's environment for the routes: no update
// checks, the local Go toolchain.
func alwaysEnvironment(t *testing.T) []string {
	return append(cliEnvironment(t), "NPM_CONFIG_UPDATE_NOTIFIER=false", "NO_UPDATE_NOTIFIER=1", "GOTOOLCHAIN=local", "GOFLAGS=")
}

// workspace makes the route's workspace.
func (r codeRoute) workspace(t *testing.T) string {
	t.Helper()
	if r.needs != "" {
		if _, err := exec.LookPath(r.needs); err != nil {
			t.Skipf("%s is not installed", r.needs)
		}
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range r.files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r.alias != "" {
		for _, args := range [][]string{{"init", "-q"}, {"config", "alias.hello", r.alias}} {
			if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	return ws
}

// notRewritten fails the test when the rewritten code ran.
func notRewritten(t *testing.T, ws, out string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(ws, "pwned")); err == nil {
		t.Errorf("the rewritten code ran under the earlier approval:\n%s", out)
	}
}

// TestAttackAlwaysAtTheTerminal: "always" answered at a real terminal
// holds, in later processes without a terminal, only while the code the
// command runs is unchanged; the prompt says so.
func TestAttackAlwaysAtTheTerminal(t *testing.T) {
	t.Parallel()
	for _, r := range codeRoutes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			ws := r.workspace(t)
			env := alwaysEnvironment(t)
			args := mustJSON(t, map[string]any{"command": r.command})
			screen := approveAlwaysAtTerminal(t, env, ws, args)
			if !strings.Contains(screen, "ran-1") {
				t.Fatalf("the approved command did not run:\n%s", screen)
			}
			if want := "remember:   [s] and [w] cover this command, while the workspace's files stay as they are now"; !strings.Contains(screen, want) {
				t.Errorf("the prompt does not say what \"always\" covers (%q):\n%s", want, screen)
			}
			exe := func() cliResult {
				return runCLIWith(t, env, "", "", "call", "exec", "--workspace", ws, "--args", args)
			}
			if res := exe(); res.code != 0 || !strings.Contains(res.stdout, "ran-1") {
				t.Fatalf("unchanged, the approved command was not run unasked: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			runCLIWith(t, env, "", "", "call", "write", "--workspace", ws, "--args", mustJSON(t, map[string]any{"path": r.file, "content": r.evil})).expect(t, 0)
			res := exe()
			if res.code != 1 || !strings.Contains(res.stdout+res.stderr, "approv") {
				t.Errorf("after the rewrite the command was not asked about again: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			notRewritten(t, ws, res.stdout+res.stderr)
		})
	}
	// A command that runs no workspace code keeps its "always" whatever
	// the workspace's files become.
	t.Run("code-free", func(t *testing.T) {
		t.Parallel()
		ws := codeRoute{}.workspace(t)
		env := alwaysEnvironment(t)
		args := mustJSON(t, map[string]any{"command": "rm -f gone.txt"})
		screen := approveAlwaysAtTerminal(t, env, ws, args)
		if want := "remember:   [s] and [w] cover this exact command line, in this workspace"; !strings.Contains(screen, want) {
			t.Errorf("the prompt does not say what \"always\" covers (%q):\n%s", want, screen)
		}
		runCLIWith(t, env, "", "", "call", "write", "--workspace", ws, "--args", `{"path":"other.txt","content":"x"}`).expect(t, 0)
		runCLIWith(t, env, "", "", "call", "exec", "--workspace", ws, "--args", args).expect(t, 0)
	})
}

// approveAlwaysAtTerminal runs exec with args at a terminal, answers
// "this workspace", and returns the screen.
func approveAlwaysAtTerminal(t *testing.T, env []string, ws, args string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "call", "exec", "--workspace", ws, "--args", args)
	cmd.Env = env
	code, screen := atTerminal(t, cmd, [2]string{"[w] this workspace (kept until revoked), [n] no: ", "w"})
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	return screen
}

// mcpAsker answers approval questions over MCP: "allow in this workspace" first, then
// declines, and keeps the questions.
type mcpAsker struct {
	mu        sync.Mutex
	questions []*sdk.ElicitParams
}

func (a *mcpAsker) handle(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.questions = append(a.questions, req.Params)
	if len(a.questions) == 1 {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow in this workspace"}}, nil
	}
	return &sdk.ElicitResult{Action: "decline"}, nil
}

func (a *mcpAsker) question(i int) *sdk.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.questions[i]
}

func (a *mcpAsker) asked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.questions)
}

// TestAttackAlwaysOverMCP: the same, with a real MCP client whose user
// answers "allow in this workspace" through elicitation, over stdio (every route)
// and streamable HTTP.
func TestAttackAlwaysOverMCP(t *testing.T) {
	t.Parallel()
	for _, r := range codeRoutes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			ws := r.workspace(t)
			a := &mcpAsker{}
			alwaysOverMCP(t, r, ws, a, overStdio(alwaysEnvironment(t), "mcp", "--workspace", ws))
		})
	}
	for _, r := range []codeRoute{codeRoutes[0], codeRoutes[5]} {
		t.Run("http/"+r.name, func(t *testing.T) {
			t.Parallel()
			ws := r.workspace(t)
			a := &mcpAsker{}
			alwaysOverMCP(t, r, ws, a, overHTTP(t, alwaysEnvironment(t), "--workspace", ws))
		})
	}
}

func alwaysOverMCP(t *testing.T, r codeRoute, ws string, a *mcpAsker, transport sdk.Transport) {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "approver", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: a.handle})
	m := mcpAttacker{connectMCP(t, client, transport)}
	for i := range 2 {
		if out, isErr := m.call(t, "exec", map[string]any{"command": r.command}); isErr || !strings.Contains(out, "ran-1") {
			t.Fatalf("run %d: %s", i, out)
		}
	}
	if n := a.asked(); n != 1 {
		t.Fatalf("asked %d times, want once: the \"always\" did not hold", n)
	}
	q := a.question(0)
	if want := "Allowing it for this session or in this workspace covers this command, while the workspace's files stay as they are now;"; !strings.Contains(q.Message, want) {
		t.Errorf("the question does not say what \"always\" covers (%q):\n%s", want, q.Message)
	}
	if out, isErr := m.call(t, "write", map[string]any{"path": r.file, "content": r.evil}); isErr {
		t.Fatalf("write: %s", out)
	}
	out, isErr := m.call(t, "exec", map[string]any{"command": r.command})
	if !isErr || a.asked() != 2 {
		t.Errorf("after the rewrite the command was not asked about again (asked %d times):\n%s", a.asked(), out)
	}
	notRewritten(t, ws, out)
}
