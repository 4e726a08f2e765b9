package shell

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

func TestLiteral(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src, want string
		glob      bool
		prefix    string
		unknown   bool
	}{
		{src: `\-la`, want: "-la"},
		{src: `'a|b'`, want: "a|b"},
		{src: `"x\$y"`, want: "x$y"},
		{src: `"a\b"`, want: `a\b`},
		{src: `'a'"b"c`, want: "abc"},
		{src: "a\\\nb", want: "ab"},
		{src: `a\*b`, want: "a*b"},
		{src: `src/*.go`, want: "src/*.go", glob: true, prefix: "src/"},
		{src: `'-'*`, want: "-*", glob: true, prefix: "-"},
		{src: `HEAD~1`, want: "HEAD~1"},
		{src: `$x`, unknown: true},
		{src: `~/x`, unknown: true},
		{src: `a=~/x`, unknown: true},
		{src: `{a,b}`, unknown: true},
		{src: `{}`, want: "{}"},
		{src: `x{}.bak`, want: "x{}.bak"},
		{src: `{}{a,b}`, unknown: true},
		{src: `{'a,b'}`, unknown: true},
		{src: `{}}`, unknown: true},
		{src: `{{}`, unknown: true},
		{src: `$'\x41'`, unknown: true},
		{src: `"$(id)"`, unknown: true},
	}
	for _, tt := range tests {
		f, err := parseCommand("cmd " + tt.src)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		w, ok := literal(f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1])
		switch {
		case ok == tt.unknown:
			t.Errorf("%s: literal = %v, want %v", tt.src, ok, !tt.unknown)
		case ok && (w.value != tt.want || w.glob != tt.glob || w.prefix != tt.prefix):
			t.Errorf("%s: %+v, want %q glob %v prefix %q", tt.src, w, tt.want, tt.glob, tt.prefix)
		}
	}
}

// effectsOf returns the effects a dry run of exec reports.
func effectsOf(t *testing.T, msg tool.ResultMessage) tool.Effects {
	t.Helper()
	if msg.IsError {
		t.Fatalf("dry run failed: %s", text(msg))
	}
	b, err := json.Marshal(msg.Details)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Effects *tool.Effects `json:"effects"`
		Details struct {
			Effects *tool.Effects `json:"effects"`
		} `json:"details"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Effects != nil:
		return *d.Effects
	case d.Details.Effects != nil:
		return *d.Details.Effects
	}
	t.Fatalf("no effects in %s", b)
	return tool.Effects{}
}

// preview runs exec as a dry run through the pipeline.
func (e *env) preview(args map[string]any) tool.Effects {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	msg := e.runner.Run(context.Background(), tool.Call{ID: "dry", Name: "exec", Arguments: raw}, invoke.DryRun())
	return effectsOf(e.t.(*testing.T), msg)
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestExecPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if err := os.Mkdir(filepath.Join(e.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := e.preview(map[string]any{"command": "ls -la > listing.txt", "workdir": "sub", "env": map[string]any{"GREETING": "hi"}})
	want := tool.Effects{
		Summary: "run `ls -la > listing.txt` in " + filepath.Join(e.root, "sub") + "; programs: ls (" + lookPath(t, "ls") + ")",
		Command: "ls -la > listing.txt", Workdir: filepath.Join(e.root, "sub"), Env: map[string]string{"GREETING": "hi"},
		Executable: lookPath(t, "ls"), Risk: tool.RiskHigh,
	}
	if got.Summary != want.Summary || got.Command != want.Command || got.Workdir != want.Workdir || !maps.Equal(got.Env, want.Env) ||
		got.Executable != want.Executable || got.ScriptHash != "" || got.Risk != want.Risk {
		t.Errorf("effects\n%+v\nwant\n%+v", got, want)
	}
	mustNotExist(t, filepath.Join(e.root, "sub", "listing.txt"))
	for _, args := range []map[string]any{
		{"command": "rg foo", "env": map[string]any{"RIPGREP_CONFIG_PATH": "./evil"}},
		{"command": "git log", "pty": true},
	} {
		if got := e.preview(args); got.Risk != tool.RiskHigh {
			t.Errorf("%v: risk %v, want high", args, got.Risk)
		}
	}
	if got := e.preview(map[string]any{"command": "cat x", "background": true, "sandbox": true}); got.Risk != tool.RiskLow ||
		got.Summary != "run `cat x` in "+e.root+" in the sandbox, in the background; programs: cat ("+lookPath(t, "cat")+")" || got.Env != nil {
		t.Errorf("a read-only command: %+v", got)
	}
}

// TestExecPreviewFailsAsTheCall: what the call refuses, the preview
// refuses with the same message.
func TestExecPreviewFailsAsTheCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	root := e.root
	writeFile(t, filepath.Join(root, "file"), "", 0o644)
	tc := &tool.Context{Identity: tool.Identity{Workspace: root}, FSRoot: root}
	exe, err := e.m.execFactory(tc)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"command":"echo hi > made","env":{"PATH":"/tmp/evil"}}`,
		`{"command":"echo hi > made","env":{"LD_PRELOAD":"/tmp/x.so","OK":"1"}}`,
		`{"command":"echo hi > made","env":{"1BAD":"x"}}`,
		`{"command":"echo hi > made","workdir":"../.."}`,
		`{"command":"echo hi > made","workdir":"file"}`,
		`{"command":"echo hi > made","timeout":999999}`,
	} {
		call := tool.Call{ID: "c", Name: "exec", Arguments: json.RawMessage(args)}
		_, perr := exe.Preview(context.Background(), call, tc)
		_, xerr := exe.Execute(context.Background(), call, tc, func(tool.Result) {})
		var pie, xie *tool.InputError
		if !errors.As(perr, &pie) || !errors.As(xerr, &xie) || pie.Message != xie.Message {
			t.Errorf("%s: preview %v, call %v", args, perr, xerr)
		}
		mustNotExist(t, filepath.Join(root, "made"))
	}
}

// TestExecPreviewScripts: the preview hashes the script files in the
// workspace a command runs, however it runs them.
func TestExecPreviewScripts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, dir := range []string{"scripts", "sub"} {
		if err := os.Mkdir(filepath.Join(e.root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	deploy := "#!/bin/sh\necho deploying\n"
	writeFile(t, filepath.Join(e.root, "deploy.sh"), deploy, 0o755)
	writeFile(t, filepath.Join(e.root, "scripts", "x.sh"), "echo x\n", 0o644)
	bash, sh := lookPath(t, "bash"), lookPath(t, "sh")
	tests := []struct {
		command, executable, hash string
	}{
		{"./deploy.sh", filepath.Join(e.root, "deploy.sh"), sha(deploy)},
		{"./deploy.sh --prod 2>&1 | tail -5", filepath.Join(e.root, "deploy.sh"), sha(deploy)},
		{"bash deploy.sh", bash, sha(deploy)},
		{"bash -x scripts/x.sh", bash, sha("echo x\n")},
		{"sh scripts/x.sh arg", sh, sha("echo x\n")},
		{"timeout 10 env A=1 sh deploy.sh", sh, sha(deploy)},
		{"source scripts/x.sh", "", sha("echo x\n")},
		{". ./deploy.sh", "", sha(deploy)},
		{"bash -c ./deploy.sh", bash, ""},
		{"cd sub && ./deploy.sh", "", ""},
		{"./deploy.sh && sh scripts/x.sh", filepath.Join(e.root, "deploy.sh"),
			sha(fmt.Sprintf("%s  deploy.sh\n%s  scripts/x.sh\n", sha(deploy), sha("echo x\n")))},
		{"echo hi", "", ""},
		{"no-such-program-here", "", ""},
	}
	for _, tt := range tests {
		got := e.preview(map[string]any{"command": tt.command})
		if got.Executable != tt.executable || got.ScriptHash != tt.hash {
			t.Errorf("%q: executable %q, script hash %q; want %q, %q", tt.command, got.Executable, got.ScriptHash, tt.executable, tt.hash)
		}
	}
	// A changed script changes the hash, and so the approval's fingerprint.
	before := e.preview(map[string]any{"command": "./deploy.sh"})
	writeFile(t, filepath.Join(e.root, "deploy.sh"), deploy+"rm -rf /\n", 0o755)
	after := e.preview(map[string]any{"command": "./deploy.sh"})
	args := json.RawMessage(`{"command":"./deploy.sh"}`)
	if after.ScriptHash != sha(deploy+"rm -rf /\n") ||
		invoke.Fingerprint("exec", args, nil, &before) == invoke.Fingerprint("exec", args, nil, &after) {
		t.Errorf("the script changed but the preview did not: %q then %q", before.ScriptHash, after.ScriptHash)
	}
}

// TestExecPreviewFollowsPath: when PATH resolves the command to another
// program, the preview's executable (and the fingerprint) changes. It sets
// PATH, so it does not run in parallel.
func TestExecPreviewFollowsPath(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	t.Setenv("PATH", first+string(os.PathListSeparator)+second+string(os.PathListSeparator)+os.Getenv("PATH"))
	e := newEnv(t, nil)
	writeFile(t, filepath.Join(second, "mytool"), "#!/bin/sh\necho second\n", 0o755)
	before := e.preview(map[string]any{"command": "mytool --version"})
	if want := filepath.Join(second, "mytool"); before.Executable != want {
		t.Fatalf("executable %q, want %q", before.Executable, want)
	}
	writeFile(t, filepath.Join(first, "mytool"), "#!/bin/sh\necho first\n", 0o644)
	if got := e.preview(map[string]any{"command": "mytool --version"}); got.Executable != before.Executable {
		t.Errorf("a file that is not executable was taken: %q", got.Executable)
	}
	if err := os.Chmod(filepath.Join(first, "mytool"), 0o755); err != nil {
		t.Fatal(err)
	}
	after := e.preview(map[string]any{"command": "mytool --version"})
	args := json.RawMessage(`{"command":"mytool --version"}`)
	if want := filepath.Join(first, "mytool"); after.Executable != want ||
		invoke.Fingerprint("exec", args, nil, &before) == invoke.Fingerprint("exec", args, nil, &after) {
		t.Errorf("executable %q, want %q, and a new fingerprint", after.Executable, want)
	}
	if !strings.HasPrefix(before.Summary, "run `mytool --version` in ") {
		t.Errorf("summary %q", before.Summary)
	}
}
