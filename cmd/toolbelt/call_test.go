package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCallArgumentsNotJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ args, want string }{
		{"notes.txt", "arguments are not valid JSON: invalid character 'o' in literal null (expecting 'u') at line 1, column 2"},
		{`{"name": "Ada",}`, "arguments are not valid JSON: invalid character '}' looking for beginning of object key string at line 1, column 16"},
		{"{\n  name: 1}", "at line 2, column 3"},
	} {
		r := runCLI(t, "", "call", "test_greet", "--args", tc.args).expect(t, 2)
		if !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "null was received") {
			t.Errorf("%q: stderr %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
	// The same from stdin.
	r := runCLI(t, "hello", "call", "test_greet").expect(t, 2)
	if !strings.Contains(r.stderr, "arguments are not valid JSON") {
		t.Errorf("stdin: %q", r.stderr)
	}
}

// TestCallShowsTheIDToUndo: a call that changes files says, on stderr, the
// id that undo takes; undo with it restores the file.
func TestCallShowsTheIDToUndo(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	env := cliEnvironment(t)
	run := func(args ...string) cliResult { t.Helper(); return runCLIWith(t, env, "", "", args...) }
	r := run("call", "write", "--workspace", ws, "--args", `{"path":"a.txt","content":"new"}`).expect(t, 0)
	m := regexp.MustCompile(`toolbelt: call (cli_[0-9a-z]{18}) changed a file; 'toolbelt undo (cli_[0-9a-z]{18})' takes the changes back\.`).FindStringSubmatch(r.stderr)
	if m == nil || m[1] != m[2] || strings.Contains(r.stdout, m[1]) {
		t.Fatalf("stdout %q\nstderr %q", r.stdout, r.stderr)
	}
	run("undo", m[1], "--workspace", ws).expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("undo did not remove the created file: %v", err)
	}
	// A call that changes nothing, or --json, prints no such line.
	r = run("call", "read", "--workspace", ws, "--args", `{"path":"."}`)
	if strings.Contains(r.stderr, "toolbelt undo") {
		t.Errorf("read: %q", r.stderr)
	}
	r = run("call", "write", "--json", "--workspace", ws, "--args", `{"path":"b.txt","content":"x"}`).expect(t, 0)
	if r.stderr != "" {
		t.Errorf("--json: stderr %q", r.stderr)
	}
}

func TestBlockedCallSaysHowToApprove(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "test_danger", "--args", `{"target":"build"}`).expect(t, 1)
	if !strings.Contains(r.stderr, "there is no terminal to ask for approval on") || !strings.Contains(r.stderr, "--yes") || !strings.Contains(r.stderr, "tools.ask") {
		t.Errorf("stderr: %s", r.stderr)
	}
	// A call blocked by policy, not for want of a person, gets no such hint.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("tools:\n  deny: [test_danger]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "--config", cfg, "call", "test_danger", "--args", `{"target":"build"}`).expect(t, 1)
	if strings.Contains(r.stderr, "--yes") {
		t.Errorf("denied by policy: %s", r.stderr)
	}
}

// TestAlwaysPersistsPerWorkspace answers "this workspace" at a real
// terminal; a later run, in another process without a terminal, runs the
// same action without asking, in that workspace only. approvals list shows
// it with who gave it; revoking it is recorded in the audit log, and the
// action asks again.
func TestAlwaysPersistsPerWorkspace(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	ws, other := t.TempDir(), t.TempDir()
	args := []string{"call", "test_danger", "--args", `{"target":"build"}`}
	cmd := exec.Command(os.Args[0], append(args, "--workspace", ws)...)
	cmd.Env = env
	if code, screen := atTerminal(t, cmd, [2]string{"[w] this workspace (kept until revoked), [n] no: ", "w"}); code != 0 || !strings.Contains(screen, "deleted build") {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	detached := func(args ...string) cliResult { t.Helper(); return runCLIWith(t, env, "", "", args...) }
	r := detached(append(args, "--workspace", ws)...).expect(t, 0)
	if r.stdout != "deleted build\n" {
		t.Errorf("the approval did not persist: %q %q", r.stdout, r.stderr)
	}
	// Another action, or the same one in another workspace, is asked about.
	detached("call", "test_danger", "--args", `{"target":"src"}`, "--workspace", ws).expect(t, 1)
	detached(append(args, "--workspace", other)...).expect(t, 1)
	r = detached("approvals", "list", "--workspace", ws).expect(t, 0)
	if !strings.Contains(r.stdout, "until revoked") || !strings.Contains(r.stdout, "test_danger  terminal (") {
		t.Errorf("approvals list: %s", r.stdout)
	}
	if r := detached("audit", "list", "--json", "--tool", "test_danger").expect(t, 0); !strings.Contains(compactJSON(t, []byte(r.stdout)), `"answer":"allow-workspace"`) {
		t.Errorf("the grant is not in the audit log: %s", r.stdout)
	}
	detached("approvals", "revoke", "test_danger", "--workspace", ws).expect(t, 0)
	if r := detached("audit", "list", "--json").expect(t, 0); !strings.Contains(compactJSON(t, []byte(r.stdout)), `"kind":"approvals-revoked","note":"cli (`) ||
		!strings.Contains(r.stdout, "revoked the approvals and saved rules of test_danger kept for the workspace (1 approvals, 0 rules)") {
		t.Errorf("the revocation is not in the audit log: %s", r.stdout)
	}
	detached(append(args, "--workspace", ws)...).expect(t, 1)
}

// TestSavedRuleFromThePrompt answers a command's approval at a real
// terminal by saving the rule it proposes, shown as it is saved
// (exec(touch:*)); a later call in another process without a terminal
// that the rule matches runs unasked, in that workspace only; a deny of
// the configuration still wins over it; approvals list shows it; saving
// and revoking are in the audit log, and once revoked the call asks again.
func TestSavedRuleFromThePrompt(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	ws, other := t.TempDir(), t.TempDir()
	touch := func(name string) []string {
		return []string{"call", "exec", "--args", `{"command":"touch ./` + name + `"}`, "--workspace", ws}
	}
	cmd := exec.Command(os.Args[0], touch("first")...)
	cmd.Env = env
	code, screen := atTerminal(t, cmd, [2]string{"[r] save the rule, [w] this workspace (kept until revoked), [n] no: ", "r"})
	if code != 0 || !strings.Contains(screen, "[r] saves allow exec(touch:*) for this workspace") {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	detached := func(args ...string) cliResult { t.Helper(); return runCLIWith(t, env, "", "", args...) }
	detached(touch("second")...).expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "second")); err != nil {
		t.Fatalf("the saved rule did not allow the second call: %v", err)
	}
	// Another command, or the same in another workspace, is asked about.
	detached("call", "exec", "--args", `{"command":"mkdir ./dir"}`, "--workspace", ws).expect(t, 1)
	detached("call", "exec", "--args", `{"command":"touch ./x"}`, "--workspace", other).expect(t, 1)
	denied := writeConfig(t, "tools:\n  deny: [\"exec(touch ./blocked)\"]\n")
	if r := detached(append([]string{"--config", denied}, touch("blocked")...)...).expect(t, 1); !strings.Contains(r.stdout+r.stderr, "deny exec(touch ./blocked)") {
		t.Errorf("the deny did not decide: %s %s", r.stdout, r.stderr)
	}
	if r := detached("approvals", "list", "--workspace", ws).expect(t, 0); !strings.Contains(r.stdout, "exec(touch:*)  terminal (") {
		t.Errorf("approvals list: %s", r.stdout)
	}
	audited := compactJSON(t, []byte(detached("audit", "list", "--json", "--tool", "exec").expect(t, 0).stdout))
	if !strings.Contains(audited, `"answer":"allow-rule"`) || !strings.Contains(audited, `"answer":"allowed-by-rule"`) || !strings.Contains(audited, `"by":"saved rule","rule":"exec(touch:*)"`) {
		t.Errorf("saving and using the rule are not in the audit log: %s", audited)
	}
	detached("approvals", "revoke", "exec(touch:*)", "--workspace", ws).expect(t, 0)
	if r := detached("audit", "list", "--json").expect(t, 0); !strings.Contains(r.stdout, "revoked the saved rule exec(touch:*) kept for the workspace (0 approvals, 1 rules)") {
		t.Errorf("the revocation is not in the audit log: %s", r.stdout)
	}
	detached(touch("third")...).expect(t, 1)
}

// TestHomeAsWorkspace: working in the home directory chosen as the
// workspace (TOOLBELT_WORKSPACE), whose default data directory lies inside
// it, works; the tools can neither read nor change the data directory.
func TestHomeAsWorkspace(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "toolbelt")
	env := append(cliEnvironment(t), "HOME="+home, "TOOLBELT_DATA=", "XDG_DATA_HOME=", "TOOLBELT_WORKSPACE="+home)
	run := func(args ...string) cliResult { t.Helper(); return runCLIWith(t, env, home, "", args...) }
	run("call", "write", "--args", `{"path":"notes.txt","content":"hello"}`).expect(t, 0)
	if _, err := os.Stat(filepath.Join(data, "toolbelt.db")); err != nil {
		t.Fatalf("state is not in the default data directory: %v", err)
	}
	for _, tc := range []struct{ tool, args string }{
		{"read", `{"path":".local/share/toolbelt/toolbelt.db"}`},
		{"write", `{"path":".local/share/toolbelt/toolbelt.db","content":"x"}`},
		{"ls", `{"path":".local/share/toolbelt"}`},
	} {
		r := run("call", tc.tool, "--args", tc.args).expect(t, 1)
		if !strings.Contains(r.stderr, "Toolbelt's own data directory") && !strings.Contains(r.stderr, "protected path") {
			t.Errorf("%s: %s", tc.tool, r.stderr)
		}
	}
	r := run("call", "ls", "--args", `{"path":".local/share"}`).expect(t, 0)
	if strings.Contains(r.stdout, "toolbelt") {
		t.Errorf("ls lists the data directory:\n%s", r.stdout)
	}
	r = run("call", "grep", "--args", `{"pattern":"CREATE TABLE"}`)
	if strings.Contains(r.stdout, "toolbelt.db") {
		t.Errorf("grep searched the data directory:\n%s", r.stdout)
	}
	// The MCP servers start there too: toolbelt mcp, toolbelt serve.
	run("mcp").expect(t, 0)
	out, _ := serveBannerIn(t, home, os.Args[0], env, "--addr", "127.0.0.1:0")
	for _, want := range []string{"  workspace  " + home + "\n", "  state      " + filepath.Join(data, "toolbelt.db") + " (inside the workspace, hidden from the tools)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve's banner lacks %q:\n%s", want, out)
		}
	}
}
