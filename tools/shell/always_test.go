package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestCodeFree: only command lines made of programs known to run no code
// from the workspace are bound to themselves; everything that may run a
// workspace file, or turn data read from one into code, is not.
func TestCodeFree(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "rm"), "#!/bin/sh\n", 0o755)
	system := filepath.SplitList(systemPath)
	free := []string{
		"rm -rf build", "ls -la; cat a.txt | grep x > /dev/null 2>&1", "mkdir -p out && touch out/x",
		"cd sub && rm x", "rm 'x y' *.o", "rm $(cat list.txt)", "cat < a.txt", "echo hi", "diff -r a b",
		"du -sh . | head", "grep -rn TODO . | head -5", "r\\m x", "rm x &", "chmod +x build.sh",
		"cat <<EOF\nplain\nEOF", "rm x # a comment", "rm x |& cat", "rm >(cat)", "cat a > /dev/null", "cat a >&3 2>&-",
	}
	notFree := []string{
		// The routes of issue 25, and what they stand for.
		"make -s t", "make -f other.mk", "npm test", "npx jest", "go test ./...", "go run .",
		"sh < t.sh", "cat t.sh | sh", "bash -c '. ./t.sh'", ". ./t.sh", "source t.sh", "./build.sh",
		"python3 t.py", "node -e 'require(\"./t.js\")'", "git status", "git commit -m x", "git hello",
		// Programs that run others, named or not.
		"xargs rm < list", "find . -name x -exec rm {} ;", "env rm x", "command rm x", "exec rm x",
		"nice rm x", "timeout 5 rm x", "sudo rm x", "busybox rm x", "unknown-program",
		// Programs that write what they read where it may run later.
		"cp a ~/.bashrc", "mv a b", "ln -s a b", "tee b < a", "cat a > b", "cat a >> ~/.profile", "sort -o b a",
		"du -sh . | sort", "cat a >& b", "cat a &> b", "cat a <& b",
		"dd if=a of=b", "install a /usr/local/bin", "curl -o x http://x",
		// The shell turning data into code, or changing what runs.
		"rm $X", "echo ${x@P}", "for x in $(cat f); do echo $((x)); done", "[[ $(cat f) -eq 1 ]]",
		"(( x ))", "let x=1", "X=1 rm x", "export PATH=.; rm x", "f() { rm x; }; f", "hash -p ./evil rm; rm x",
		"enable -f ./x.so x", "trap 'rm x' EXIT", "eval rm x", "$(echo rm) x", "printf -v x y", "read x",
		"coproc rm x", "time rm x", "test -v x", "[ -v x ]", "alias rm=./evil", "bin/rm x", "./rm x",
		"if true; then rm x; fi", "case x in x) rm x;; esac", "`echo rm` x", "rm x; unknown", "rm (",
	}
	for _, cmd := range free {
		if !codeFree(execInput{Command: cmd}, root, &resolver{root: root, dir: root, path: system}) {
			t.Errorf("%q: not code-free, want code-free", cmd)
		}
	}
	for _, cmd := range notFree {
		if codeFree(execInput{Command: cmd}, root, &resolver{root: root, dir: root, path: system}) {
			t.Errorf("%q: code-free, want not", cmd)
		}
	}
	// The call's variables, and a PATH that reaches into the workspace
	// (where a program could be put between the check and the start), make
	// any command line one that may run workspace code.
	if codeFree(execInput{Command: "rm x", Env: map[string]string{"GREP_OPTIONS": "x"}}, root, &resolver{root: root, dir: root, path: system}) {
		t.Error("a call that sets variables is code-free")
	}
	outsideLink := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(root, outsideLink); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{
		slices.Concat([]string{"."}, system), slices.Concat([]string{""}, system), slices.Concat(system, []string{"bin"}),
		slices.Concat(system, []string{filepath.Join(root, "bin")}), slices.Concat(system, []string{filepath.Join(outsideLink, "not-yet")}),
	} {
		if codeFree(execInput{Command: "rm x"}, root, &resolver{root: root, dir: root, path: path}) {
			t.Errorf("PATH %q: code-free", path)
		}
	}
	// A code-free program that resolves into the workspace is not.
	if codeFree(execInput{Command: "rm x"}, root, &resolver{root: root, dir: root, path: []string{root}}) {
		t.Error("rm found in the workspace is code-free")
	}
}

// TestWorkspaceHash: the hash changes with every change of a path, a
// mode, a file's content or a link's target anywhere in the workspace, git's
// directory included; not with the concealed data directory, nor with file
// times; the cache of file hashes never hides a change; special files are
// not opened; a workspace over the bounds is not hashed.
func TestWorkspaceHash(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, ".data")
	for _, d := range []string{".git/hooks", "src", ".data"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "Makefile"), "t:\n\techo ok\n", 0o644)
	writeFile(t, filepath.Join(root, "src", "t.sh"), "echo ok\n", 0o644)
	writeFile(t, filepath.Join(root, ".git", "hooks", "pre-commit"), "#!/bin/sh\n", 0o755)
	if err := os.Symlink("t.sh", filepath.Join(root, "src", "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every file counts as old enough to be remembered by its metadata.
	h := &treeHashes{racyAge: -time.Hour}
	hash := func() string {
		t.Helper()
		s, err := h.hash(context.Background(), root, []string{data})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := hash()
	if hash() != first {
		t.Fatal("the hash of an unchanged workspace changed")
	}
	// Changes that keep the hash.
	writeFile(t, filepath.Join(data, "toolbelt.db"), "state", 0o600)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "Makefile"), later, later); err != nil {
		t.Fatal(err)
	}
	if hash() != first {
		t.Error("the concealed data directory or a file's times changed the hash")
	}
	// Changes that do not, each undone after.
	for _, c := range []struct {
		what     string
		do, undo func()
	}{
		{what: "content of the same length, with the old times put back", do: func() {
			st, err := os.Stat(filepath.Join(root, "Makefile"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "Makefile"), "t:\n\techo OK\n", 0o644)
			if err := os.Chtimes(filepath.Join(root, "Makefile"), st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, undo: func() { writeFile(t, filepath.Join(root, "Makefile"), "t:\n\techo ok\n", 0o644) }},
		{what: "a git hook", do: func() {
			writeFile(t, filepath.Join(root, ".git", "hooks", "pre-commit"), "#!/bin/sh\nevil\n", 0o755)
		}, undo: func() { writeFile(t, filepath.Join(root, ".git", "hooks", "pre-commit"), "#!/bin/sh\n", 0o755) }},
		{what: "a mode", do: func() { chmod(t, filepath.Join(root, "src", "t.sh"), 0o755) },
			undo: func() { chmod(t, filepath.Join(root, "src", "t.sh"), 0o644) }},
		{what: "a new empty file", do: func() { writeFile(t, filepath.Join(root, "src", "new"), "", 0o644) },
			undo: func() { remove(t, filepath.Join(root, "src", "new")) }},
		{what: "a new directory", do: func() { mkdir(t, filepath.Join(root, "src", "dir")) },
			undo: func() { remove(t, filepath.Join(root, "src", "dir")) }},
		{what: "a link's target", do: func() {
			remove(t, filepath.Join(root, "src", "link"))
			if err := os.Symlink("../Makefile", filepath.Join(root, "src", "link")); err != nil {
				t.Fatal(err)
			}
		}, undo: func() {
			remove(t, filepath.Join(root, "src", "link"))
			if err := os.Symlink("t.sh", filepath.Join(root, "src", "link")); err != nil {
				t.Fatal(err)
			}
		}},
		{what: "a renamed file", do: func() { rename(t, filepath.Join(root, "src", "t.sh"), filepath.Join(root, "src", "u.sh")) },
			undo: func() { rename(t, filepath.Join(root, "src", "u.sh"), filepath.Join(root, "src", "t.sh")) }},
	} {
		c.do()
		if hash() == first {
			t.Errorf("%s kept the hash", c.what)
		}
		c.undo()
		if got := hash(); got != first {
			t.Errorf("after undoing %s, the hash is not the first one", c.what)
		}
	}
	// Bounds.
	for _, tight := range []*treeHashes{{maxEntries: 5}, {maxBytes: 8}} {
		if _, err := tight.hash(context.Background(), root, nil); err == nil || !strings.Contains(err.Error(), "too m") {
			t.Errorf("a workspace over the bounds: %v", err)
		}
	}
}

// BenchmarkWorkspaceHash measures hashing a workspace of 10,000 files of
// 4 KiB in 100 directories: the first time (every file read) and again
// (files remembered by their metadata).
func BenchmarkWorkspaceHash(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("x", 4096)
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			writeFile(b, filepath.Join(dir, fmt.Sprintf("f%03d", f)), content, 0o644)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			h := &treeHashes{}
			if _, err := h.hash(context.Background(), root, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		h := &treeHashes{racyAge: -time.Hour}
		if _, err := h.hash(context.Background(), root, nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := h.hash(context.Background(), root, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// answers is a confirmer that records what it is asked and answers from a
// list (the last answer repeats); before, when set, runs first (as a
// concurrent call could while the person reads the question).
type answers struct {
	mu     sync.Mutex
	asked  []invoke.Confirmation
	list   []invoke.Answer
	before func()
}

func (a *answers) Confirm(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.before != nil {
		a.before()
	}
	a.asked = append(a.asked, c)
	ans := a.list[min(len(a.asked), len(a.list))-1]
	return ans, nil
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// alwaysEnv is a workspace and a runner whose person answers a.
func alwaysEnv(t *testing.T, a *answers) (string, *invoke.Runner, *Manager) {
	t.Helper()
	e := newEnv(t, nil, invoke.WithConfirmer(a))
	return e.root, e.runner, e.m
}

func runExec(t *testing.T, r *invoke.Runner, command string) tool.ResultMessage {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), tool.Call{ID: "c", Name: "exec", Arguments: raw})
}

var (
	allowAlways = invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: "test"}
	allowOnce   = invoke.Answer{Allow: true, By: "test"}
	deny        = invoke.Answer{By: "test"}
)

// TestExecAlwaysIsBoundToWorkspaceFiles: an "always" for a command that
// may run workspace code holds while the workspace's files stay as they
// were, however the code is reached; a rewritten file asks again. A
// code-free command's "always" holds for its command line.
func TestExecAlwaysIsBoundToWorkspaceFiles(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"sh < t.sh", "cat t.sh | sh", "bash -c '. ./t.sh'", "find . -name t.sh -exec sh {} \\;", "xargs sh < list"} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			a := &answers{list: []invoke.Answer{allowAlways, deny}}
			root, r, _ := alwaysEnv(t, a)
			writeFile(t, filepath.Join(root, "t.sh"), "echo ran-1\n", 0o644)
			writeFile(t, filepath.Join(root, "list"), "t.sh\n", 0o644)
			for i := range 2 {
				if msg := runExec(t, r, command); msg.IsError || !strings.Contains(text(msg), "ran-1") {
					t.Fatalf("run %d: %s", i, text(msg))
				}
			}
			if n := a.count(); n != 1 {
				t.Fatalf("asked %d times, want once", n)
			}
			if c := a.asked[0]; c.Always != alwaysWorkspace || c.Effects.WorkspaceHash == "" {
				t.Errorf("the person was told \"always\" covers %q (hash %q)", c.Always, c.Effects.WorkspaceHash)
			}
			writeFile(t, filepath.Join(root, "t.sh"), "touch pwned\n", 0o644)
			if msg := runExec(t, r, command); !msg.IsError || a.count() != 2 {
				t.Errorf("the rewritten script ran under the old approval: %s", text(msg))
			}
			mustNotExist(t, filepath.Join(root, "pwned"))
		})
	}
	t.Run("code-free", func(t *testing.T) {
		t.Parallel()
		a := &answers{list: []invoke.Answer{allowAlways, deny}}
		root, r, _ := alwaysEnv(t, a)
		for i := range 2 {
			if msg := runExec(t, r, "rm -f gone.txt"); msg.IsError {
				t.Fatalf("run %d: %s", i, text(msg))
			}
			writeFile(t, filepath.Join(root, "other.txt"), "changed\n", 0o644)
		}
		if a.count() != 1 || a.asked[0].Always != alwaysLine || a.asked[0].Effects.WorkspaceHash != "" {
			t.Errorf("asked %d times: %+v", a.count(), a.asked)
		}
	})
}

// TestExecNoAlwaysForAnUnhashableWorkspace: when the workspace is too big
// to hash, "always" is not offered for a command that may run its code,
// and an "always" answer counts once.
func TestExecNoAlwaysForAnUnhashableWorkspace(t *testing.T) {
	t.Parallel()
	a := &answers{list: []invoke.Answer{allowAlways}}
	root, r, m := alwaysEnv(t, a)
	m.trees.maxEntries = 2
	writeFile(t, filepath.Join(root, "t.sh"), "echo ran\n", 0o644)
	writeFile(t, filepath.Join(root, "u.sh"), "echo ran\n", 0o644)
	for range 2 {
		if msg := runExec(t, r, "sh < t.sh"); msg.IsError {
			t.Fatal(text(msg))
		}
	}
	if n := a.count(); n != 2 {
		t.Errorf("asked %d times, want 2: the \"always\" held", n)
	}
	if c := a.asked[0]; c.Always != "" || c.NoAlways != "the workspace has more than 2 files, too many to fingerprint" {
		t.Errorf("always %q, not offered because %q", c.Always, c.NoAlways)
	}
}

// TestExecRefusesCodeChangedAfterApproval: a file of the workspace written
// between the approval and the start (by a call running meanwhile) stops
// the command: the approval does not cover that code.
func TestExecRefusesCodeChangedAfterApproval(t *testing.T) {
	t.Parallel()
	for _, answer := range []invoke.Answer{allowOnce, allowAlways} {
		a := &answers{list: []invoke.Answer{answer}}
		root, r, _ := alwaysEnv(t, a)
		writeFile(t, filepath.Join(root, "t.sh"), "echo ran-1\n", 0o644)
		a.before = func() { writeFile(t, filepath.Join(root, "t.sh"), "touch pwned\n", 0o644) }
		msg := runExec(t, r, "sh < t.sh")
		if !msg.IsError || !strings.Contains(text(msg), "a file of the workspace changed after it was approved") {
			t.Errorf("%+v: %s", answer, text(msg))
		}
		mustNotExist(t, filepath.Join(root, "pwned"))
	}
	// Called with the effects a preview gave before the change.
	a := &answers{list: []invoke.Answer{allowOnce}}
	root, _, m := alwaysEnv(t, a)
	writeFile(t, filepath.Join(root, "t.sh"), "echo ran-1\n", 0o644)
	tc := &tool.Context{Identity: tool.Identity{Workspace: root}, FSRoot: root}
	exe, err := m.execFactory(tc)
	if err != nil {
		t.Fatal(err)
	}
	call := tool.Call{ID: "c", Name: "exec", Arguments: json.RawMessage(`{"command":"sh < t.sh"}`)}
	e, err := exe.Preview(context.Background(), call, tc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := tool.WithApprovedEffects(tool.WithApproval(context.Background(), tool.ApprovalGiven), &e)
	if res, err := exe.Execute(ctx, call, tc, func(tool.Result) {}); err != nil || !strings.Contains(res.Content[0].Text, "ran-1") {
		t.Fatalf("unchanged: %v %+v", err, res)
	}
	writeFile(t, filepath.Join(root, "t.sh"), "touch pwned\n", 0o644)
	_, err = exe.Execute(ctx, call, tc, func(tool.Result) {})
	var ie *tool.InputError
	if !errors.As(err, &ie) {
		t.Errorf("changed: %v", err)
	}
	mustNotExist(t, filepath.Join(root, "pwned"))
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func rename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
