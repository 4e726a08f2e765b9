package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// modeRun is what one toolbelt run in a permission mode did: the text of
// each call's result by call id, and the audit record of each call.
type modeRun struct {
	results map[string]string
	records map[string]map[string]any
	r       cliResult
}

// runInMode has a replayed model make calls in one turn — each as a
// llmtest.Call — then answer, through toolbelt run with args (--mode …),
// in the workspace ws, with confirm.medium on so that file changes ask in
// the default mode. Nobody can be asked (no terminal, no console).
func runInMode(t *testing.T, ws string, code int, calls []llmtest.Call, args ...string) modeRun {
	t.Helper()
	return runInModeAs(t, thisUser(t), ws, code, calls, args...)
}

// runInModeAs is runInMode with toolbelt run by u.
func runInModeAs(t *testing.T, u modeUser, ws string, code int, calls []llmtest.Call, args ...string) modeRun {
	t.Helper()
	cfg := u.config(t, "confirm:\n  medium: true\n")
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "Working on it.", calls...)},
		llmtest.Response{Body: llmtest.Chat("", "Done.")})
	argv := append([]string{"--config", cfg, "run", "--model", "vllm/m", "--base-url", s.URL + "/v1", "--workspace", ws, "--json"}, args...)
	u.own(t)
	r := u.run(t, u.env, "", "", append(argv, "do the task")...).expect(t, code)
	out := modeRun{results: map[string]string{}, records: map[string]map[string]any{}, r: r}
	if code != 0 {
		return out
	}
	var transcript []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"toolCallId"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatalf("stdout is not the transcript: %v\n%s", err, r.stdout)
	}
	for _, m := range transcript {
		if m.Role == "toolResult" && len(m.Content) > 0 {
			out.results[m.ToolCallID] = m.Content[0].Text
		}
	}
	a := u.run(t, u.env, "", "", "--config", cfg, "audit", "--json").expect(t, 0)
	var records []map[string]any
	if err := json.Unmarshal([]byte(a.stdout), &records); err != nil {
		t.Fatalf("audit --json: %v\n%s", err, a.stdout)
	}
	for _, rec := range records {
		out.records[rec["providerCallId"].(string)] = rec // the model's id
	}
	return out
}

// expect checks that call id's result holds want, and that its audit
// record says the mode and, when answer is set, the confirmation's answer.
func (m modeRun) expect(t *testing.T, id, want, mode, answer string) {
	t.Helper()
	if !strings.Contains(m.results[id], want) {
		t.Errorf("%s: result %q, want it to hold %q", id, m.results[id], want)
	}
	rec := m.records[id]
	if rec == nil {
		t.Fatalf("%s: no audit record among %v", id, m.records)
	}
	if rec["mode"] != mode {
		t.Errorf("%s: audit record's mode %v, want %s", id, rec["mode"], mode)
	}
	c, _ := rec["confirmation"].(map[string]any)
	if answer != "" && (c == nil || c["answer"] != answer) {
		t.Errorf("%s: confirmation %v, want answer %s", id, rec["confirmation"], answer)
	}
}

// modeWorkspace is a workspace holding notes.txt.
func modeWorkspace(t *testing.T) string { return thisUser(t).workspace(t) }

// modeUser is who runs toolbelt in runInModeAs, with its state and
// configuration in dir.
type modeUser struct {
	cliUser
	env []string // the CLI's environment
	dir string
}

// thisUser is this process's user, with state in the test's temporary
// directories.
func thisUser(t *testing.T) modeUser {
	return modeUser{env: cliEnvironment(t), dir: t.TempDir()}
}

// nobody is the unprivileged user nobody (uid and gid 65534) running a
// copy of the test binary, with its state in a directory of its own that
// it owns: bypass mode is refused to root, which the tests run as in CI.
// The test is skipped when bubblewrap cannot make a sandbox for nobody.
func nobody(t *testing.T) modeUser {
	t.Helper()
	// Under the temporary directory itself: t.TempDir's parents are
	// closed to other users.
	dir, err := os.MkdirTemp("", "toolbelt-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	u := modeUser{cliUser: cliUser{bin: filepath.Join(dir, "toolbelt.test"), cred: &syscall.Credential{Uid: 65534, Gid: 65534}}, dir: dir}
	u.env = append(cliEnvironment(t), "TOOLBELT_DATA="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "HOME="+dir)
	copyFile(t, os.Args[0], u.bin)
	probe := exec.Command("bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("bubblewrap cannot make a sandbox for the user nobody here (%v: %s)", err, out)
	}
	return u
}

// workspace is a new workspace of u's holding notes.txt.
func (u modeUser) workspace(t *testing.T) string {
	t.Helper()
	ws, err := os.MkdirTemp(u.dir, "ws-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("plan the work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// config writes a configuration file of u's and returns its path.
func (u modeUser) config(t *testing.T, body string) string {
	t.Helper()
	f, err := os.CreateTemp(u.dir, "toolbelt-*.yaml")
	if err == nil {
		_, err = f.WriteString(body)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// own gives u everything in its directory but the test binary (which
// may be a link to this process's), when u is not this process's user.
func (u modeUser) own(t *testing.T) {
	t.Helper()
	if u.cred == nil {
		return
	}
	err := filepath.WalkDir(u.dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil || path == u.bin {
			return err
		}
		return os.Lchown(path, int(u.cred.Uid), int(u.cred.Gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mustNotExist fails the test when the workspace ws holds name.
func mustNotExist(t *testing.T, ws, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ws, name)); !os.IsNotExist(err) {
		t.Errorf("%s exists (%v): the call that made it should not have run", name, err)
	}
}

// The calls the modes are tried with: a read, a write in the workspace, a
// command that changes nothing, and one that does.
var (
	readCall  = llmtest.Call{ID: "c_read", Name: "read", Args: `{"path":"notes.txt"}`}
	writeCall = llmtest.Call{ID: "c_write", Name: "write", Args: `{"path":"out.txt","content":"written"}`}
	lsCall    = llmtest.Call{ID: "c_ls", Name: "exec", Args: `{"command":"ls"}`}
	touchCall = llmtest.Call{ID: "c_touch", Name: "exec", Args: `{"command":"touch made.txt"}`}
)

// TestRunDefaultModeAsks: in the default mode a write that asks is
// blocked when nobody can be asked, and the record says the mode.
func TestRunDefaultModeAsks(t *testing.T) {
	t.Parallel()
	ws := modeWorkspace(t)
	m := runInMode(t, ws, 0, []llmtest.Call{readCall, writeCall})
	m.expect(t, "c_read", "plan the work", "default", "")
	m.expect(t, "c_write", "no one is available to approve it", "default", "none")
	mustNotExist(t, ws, "out.txt")
}

// TestRunAcceptEditsMode: file changes inside the workspace run without
// asking; a command still asks.
func TestRunAcceptEditsMode(t *testing.T) {
	t.Parallel()
	ws := modeWorkspace(t)
	m := runInMode(t, ws, 0, []llmtest.Call{writeCall, touchCall}, "--mode", "acceptEdits")
	m.expect(t, "c_write", "", "acceptEdits", "mode-allow")
	m.expect(t, "c_touch", "no one is available to approve it", "acceptEdits", "none")
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("out.txt: %q, %v", b, err)
	}
	mustNotExist(t, ws, "made.txt")
}

// TestRunPlanMode: tools that change things are refused with a message
// that says the model is planning; reads and commands that change nothing
// run. The mode comes from the configuration.
func TestRunPlanMode(t *testing.T) {
	t.Parallel()
	ws := modeWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "toolbelt.yaml"), []byte("mode: plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := runInMode(t, ws, 0, []llmtest.Call{readCall, lsCall, writeCall, touchCall}, "--config", filepath.Join(ws, "toolbelt.yaml"))
	m.expect(t, "c_read", "plan the work", "plan", "")
	m.expect(t, "c_ls", "notes.txt", "plan", "")
	m.expect(t, "c_write", "You are planning (plan mode)", "plan", "mode-deny")
	m.expect(t, "c_touch", "present your plan to the user", "plan", "mode-deny")
	mustNotExist(t, ws, "out.txt")
	mustNotExist(t, ws, "made.txt")
}

// TestRunDontAskMode: what would ask is denied, saying so; what would not
// ask runs.
func TestRunDontAskMode(t *testing.T) {
	t.Parallel()
	ws := modeWorkspace(t)
	m := runInMode(t, ws, 0, []llmtest.Call{readCall, writeCall}, "--mode", "dontAsk")
	m.expect(t, "c_read", "plan the work", "dontAsk", "")
	m.expect(t, "c_write", "in dontAsk mode what would ask is denied", "dontAsk", "mode-deny")
	mustNotExist(t, ws, "out.txt")
}

// TestRunModeErrors: an unknown --mode is a usage error naming the closest
// mode.
func TestRunModeErrors(t *testing.T) {
	t.Parallel()
	m := runInMode(t, modeWorkspace(t), 2, nil, "--mode", "accept")
	if !strings.Contains(m.r.stderr, `--mode: "accept" is not a permission mode`) || !strings.Contains(m.r.stderr, `did you mean "acceptEdits"?`) {
		t.Errorf("stderr: %s", m.r.stderr)
	}
}

// TestRunBypassMode: bypass runs every call without asking, commands in
// the sandbox; it is refused, with a clear message, to a process running
// as root and where the sandbox does not work. Run as root (as in CI),
// the test shows the refusal, then runs the rest as the user nobody.
func TestRunBypassMode(t *testing.T) {
	t.Parallel()
	u := thisUser(t)
	if os.Geteuid() == 0 {
		m := runInMode(t, modeWorkspace(t), 2, nil, "--mode", "bypass")
		if !strings.Contains(m.r.stderr, "bypass mode is refused: toolbelt runs as root") {
			t.Errorf("stderr: %s", m.r.stderr)
		}
		u = nobody(t)
	}
	ws := u.workspace(t)
	broken := u.config(t, "tools:\n  exec:\n    sandbox:\n      bwrap: /nonexistent/bwrap\n")
	m := runInModeAs(t, u, ws, 2, nil, "--config", broken, "--mode", "bypass")
	if !strings.Contains(m.r.stderr, "bypass mode is refused: it runs commands only in the sandbox, which does not work here") {
		t.Errorf("stderr: %s", m.r.stderr)
	}
	if err := shellSandboxWorks(ws); err != nil {
		t.Skipf("bubblewrap cannot create its sandbox here: %v", err)
	}
	m = runInModeAs(t, u, ws, 0, []llmtest.Call{writeCall, touchCall}, "--mode", "bypass")
	m.expect(t, "c_write", "", "bypass", "mode-allow")
	m.expect(t, "c_touch", "", "bypass", "mode-allow")
	if !strings.Contains(m.r.stderr, "BYPASS MODE") {
		t.Errorf("no banner on stderr: %s", m.r.stderr)
	}
	fi, err := os.Stat(filepath.Join(ws, "made.txt"))
	if err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); u.cred != nil && st.Uid != u.cred.Uid {
		t.Errorf("the command ran as uid %d, want %d", st.Uid, u.cred.Uid)
	}
}

// shellSandboxWorks says why the exec tool's sandbox does not work in ws.
func shellSandboxWorks(ws string) error {
	return shell.SandboxWorks(context.Background(), nil, ws)
}

// TestChatMode: /mode shows the mode and the list, /mode NAME switches it
// for the next calls (recorded in the audit log), and an unknown name
// names the closest mode; the write the model then tries is refused as
// planning.
func TestChatMode(t *testing.T) {
	t.Parallel()
	ws := modeWorkspace(t)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Writing.", writeCall)},
		llmtest.Response{Body: llmtest.Anthropic("", "I will present a plan.")})
	input := "/mode\n/mode plna\n/mode plan\n/mode\nwrite out.txt\n/quit\n"
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", input, "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--mode", "acceptEdits").expect(t, 0)
	for _, want := range []string{"* acceptEdits  file changes inside the workspace run without asking\n", "  plan         read-only", "* plan "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{`"plna" is not a permission mode`, `did you mean "plan"?`, "mode: plan (read-only"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	mustNotExist(t, ws, "out.txt")
	writes := auditRecords(t, env, "--tool", "write")
	if len(writes) != 1 || writes[0].Mode != "plan" || writes[0].Decision() != "mode-deny" {
		t.Fatalf("the write's records: %+v", writes)
	}
	var switched []string
	for _, rec := range auditRecords(t, env) {
		if rec.Kind == "mode-changed" {
			switched = append(switched, rec.Mode+": "+rec.Note)
		}
	}
	if len(switched) != 1 || switched[0] != "plan: a user at the terminal (chat /mode) switched the permission mode from acceptEdits to plan" {
		t.Errorf("mode changes in the audit log: %q", switched)
	}
}

// TestChatModeAtTheTerminal: at a terminal, a write in acceptEdits mode
// runs without the approval prompt; after /mode default the next write
// asks on the terminal (and is denied there); after /mode plan the third
// is refused as planning, unasked.
func TestChatModeAtTheTerminal(t *testing.T) {
	t.Parallel()
	ws := modeWorkspace(t)
	second := llmtest.Call{ID: "c_second", Name: "write", Args: `{"path":"second.txt","content":"asked"}`}
	third := llmtest.Call{ID: "c_third", Name: "write", Args: `{"path":"third.txt","content":"planned"}`}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Writing.", writeCall)},
		llmtest.Response{Body: llmtest.Anthropic("", "Wrote it.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Writing again.", second)},
		llmtest.Response{Body: llmtest.Anthropic("", "Not written.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Writing a third.", third)},
		llmtest.Response{Body: llmtest.Anthropic("", "I will present a plan.")})
	cfg := writeConfig(t, "confirm:\n  medium: true\n")
	cmd := exec.Command(os.Args[0], "--config", cfg, "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--mode", "acceptEdits")
	cmd.Env = cliEnvironment(t)
	code, screen := atTerminal(t, cmd,
		[2]string{"/help for commands.\n> ", "write out.txt"},
		[2]string{"Wrote it.\n> ", "/mode default"},
		[2]string{"says to)\n> ", "write second.txt"},
		[2]string{"[n] no: ", "n"},
		[2]string{"(optional): ", ""},
		[2]string{"Not written.\n> ", "/mode plan"},
		[2]string{"model plans)\n> ", "write third.txt"},
		[2]string{"I will present a plan.\n> ", "/quit"})
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	before, after, ok := strings.Cut(screen, "mode: default (ask when")
	if !ok {
		t.Fatalf("no switch to default on the screen:\n%s", screen)
	}
	if strings.Contains(before, "Approval needed") || strings.Count(after, "Approval needed: write") != 1 {
		t.Errorf("want one approval prompt, for the write after /mode default:\n%s", screen)
	}
	if !strings.Contains(after, "You are planning (plan mode)") {
		t.Errorf("the write in plan mode was not refused as planning:\n%s", screen)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("out.txt: %q, %v", b, err)
	}
	mustNotExist(t, ws, "second.txt")
	mustNotExist(t, ws, "third.txt")
}
