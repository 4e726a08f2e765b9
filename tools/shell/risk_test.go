package shell

import (
	"os"
	"path/filepath"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolbelt/toolbelt/tool"
)

// riskOf classifies command as the exec tool's preview does, in a fresh
// workspace.
func riskOf(t *testing.T, root, command string, path ...string) tool.Risk {
	t.Helper()
	if path == nil {
		path = filepath.SplitList(os.Getenv("PATH"))
	}
	f, err := parseCommand(command)
	if err != nil {
		f = nil
	}
	return commandRisk(f, &resolver{root: root, dir: root, path: path})
}

func TestCommandRisk(t *testing.T) {
	t.Parallel()
	low := []string{
		"ls",
		"ls -la",
		"ls -la src/",
		"ls\n",
		"ls \\-la",
		"ls # a comment; rm -rf x",
		"cat README.md",
		"cat 'file with spaces.txt'",
		"cat src/*.go",
		"head -n 20 main.go",
		"tail -f log.txt",
		"wc -l *.go",
		"pwd",
		"echo hello world",
		`echo "a && b" 'c; d'`,
		"grep -rn 'a|b' src",
		`grep "foo; rm -rf /" file.txt`,
		"grep -e '$(whoami)' f",
		"egrep 'x|y' f",
		"fgrep -x word f",
		"rg -n TODO",
		"rg --files src/",
		"find . -name '*.go'",
		"find src -type f -newer go.mod",
		"find src/*/ -name x",
		"stat go.mod",
		"file main.go",
		"du -sh .",
		"df -h",
		"which go",
		"type ls",
		"date +%Y-%m-%d",
		"uname -a",
		"whoami",
		"id -u",
		"tree -L 2",
		"diff a.txt b.txt",
		"sort -n data.txt",
		"sort -t, -k2 data.csv",
		"uniq -c sorted.txt",
		"uniq -f 1 sorted.txt",
		"git status",
		"git status --porcelain",
		"git log --oneline -n 10",
		"git diff HEAD~1 -- main.go",
		"git log --oneline HEAD~3..HEAD",
		`cat "a\"b" "x\$y"`,
		"git show HEAD:go.mod",
		"git branch",
		"git branch -a -v",
		"git branch -vv",
		"git branch --list 'feat/*'",
		"git branch --merged main",
		"git branch --sort -committerdate",
		"git rev-parse HEAD",
		"git ls-files",
		"git blame -L 1,10 main.go",
		"git remote -v",
		"git remote",
		"git -C sub status",
		"git --no-pager log -1",
	}
	high := []string{
		"",
		"ls; rm -rf x",
		"ls ;rm x",
		"ls\nrm x",
		"ls && rm x",
		"ls || true",
		"ls | sh",
		"ls &",
		"tail -f x &",
		"coproc ls",
		"cat $(whoami)",
		"cat `whoami`",
		"ls -la $(pwd)",
		"cat <(ls)",
		"diff <(ls) <(ls a)",
		"echo hi > f",
		"echo hi >> f",
		"ls > /dev/null",
		"ls 2>/dev/null",
		"cat < /etc/passwd",
		"cat <<EOF\nx\nEOF",
		"FOO=1 ls",
		"echo $HOME",
		"echo ${PATH}",
		"echo $((1+1))",
		`cat "$FILE"`,
		`echo $'\x41'`,
		"ls {a,b}",
		"ls ~",
		"ls ~root/x",
		"grep --file=~/x y",
		"ls @(a|b)",
		"time ls",
		"! ls",
		"(ls)",
		"{ ls; }",
		"if true; then ls; fi",
		"for f in *; do cat $f; done",
		"f() { rm x; }; f",
		"ls 'unterminated",
		"cat a\\",
		"rm -rf build",
		"./ls",
		"/bin/ls",
		"bash -c 'ls'",
		"sudo ls",
		"env ls",
		"command ls",
		"xargs rm < list",
		"sed -i s/a/b/ f",
		"python3 x.py",
		"find . -delete",
		"find . -exec rm {} \\;",
		"find . -type f -execdir sh -c x \\;",
		"find . -fprint out.txt",
		"find * -name x",
		"sort -o out.txt in.txt",
		"sort --output=out.txt in.txt",
		"sort --out=x in",
		"sort -no out in",
		"sort --compress-program=sh in",
		"sort *",
		"uniq in.txt out.txt",
		"uniq -f 1 in out",
		"uniq --skip-fields 1 in",
		"uniq x*",
		"tree -o out.txt",
		"tree -RH .",
		"file -C -m magic",
		"file --comp -m magic",
		"date -s 2020-01-01",
		"date --set=now",
		"rg --pre sh foo",
		"rg --pre=./x foo",
		"rg foo *",
		"git",
		"git push",
		"git commit -m x",
		"git checkout .",
		"git branch new-feature",
		"git branch -D x",
		"git branch -m old new",
		"git branch --abbrev -D main",
		"git branch --del x",
		"git -c core.pager=sh log",
		"git --git-dir=/x log",
		"git log --output=x",
		"git log --out=x",
		"git diff --ext-diff",
		"git remote add o url",
		"git log *",
	}
	root := t.TempDir()
	for _, c := range low {
		if got := riskOf(t, root, c); got != tool.RiskLow {
			t.Errorf("%q: %v, want low", c, got)
		}
	}
	for _, c := range high {
		if got := riskOf(t, root, c); got != tool.RiskHigh {
			t.Errorf("%q: %v, want high", c, got)
		}
	}
}

// TestCommandRiskOutsideTheWorkspace: a read-only command is low risk only
// while what it reads is in the workspace — named directly, through an
// option's value or through a symbolic link.
func TestCommandRiskOutsideTheWorkspace(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "main.go"), "package main\n", 0o644)
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"cat /etc/passwd",
		"grep -r key /etc",
		"cat ../secret",
		"cat src/../../secret",
		"cat etc-link/passwd",
		"ls etc-link",
		"grep --file=/etc/shadow x main.go",
		"grep -f/etc/shadow x main.go",
		"ls /",
		"find / -name id_rsa",
		"git -C /etc log",
		"du -sh ..",
		"head -n 1 " + filepath.Dir(root) + "/other/file",
	} {
		if got := riskOf(t, root, c); got != tool.RiskHigh {
			t.Errorf("%q: %v, want high", c, got)
		}
	}
	for _, c := range []string{
		"cat " + filepath.Join(root, "main.go"),
		"cat src/../main.go",
		"ls src/new/not-yet",
		"echo /etc/passwd",
		"git log --oneline HEAD~3..HEAD",
		"grep -rn key src",
	} {
		if got := riskOf(t, root, c); got != tool.RiskLow {
			t.Errorf("%q: %v, want low", c, got)
		}
	}
}

// TestCommandRiskProgramInWorkspace: a read-only name that PATH resolves to
// a file in the workspace is not the system's program.
func TestCommandRiskProgramInWorkspace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bin, "ls"), "#!/bin/sh\nrm -rf /\n", 0o755)
	path := append([]string{bin}, filepath.SplitList(os.Getenv("PATH"))...)
	if got := riskOf(t, root, "ls", path...); got != tool.RiskHigh {
		t.Errorf("ls from the workspace: %v, want high", got)
	}
	if got := riskOf(t, root, "cat x", path...); got != tool.RiskLow {
		t.Errorf("cat from the system: %v, want low", got)
	}
	if got := riskOf(t, root, "ls", "bin"); got != tool.RiskHigh {
		t.Errorf("ls through a relative PATH entry: %v, want high", got)
	}
}

// FuzzCommandAnalysis: whatever the command line, classifying it and
// working out what it starts never panics, and a low-risk line is one
// simple command of a read-only program.
func FuzzCommandAnalysis(f *testing.F) {
	for _, c := range []string{"ls -la", "git branch --merged main", "cat $(whoami)", `echo "a\$b" 'c'`, "uniq -cf1 in", "./x.sh && bash y.sh", "find . -name '*.go'"} {
		f.Add(c)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, command string) {
		file, err := parseCommand(command)
		if err != nil {
			return
		}
		r := resolver{root: root, dir: root, path: []string{"/usr/bin", "/bin"}}
		check := r
		risk := commandRisk(file, &check)
		r.launched(file)
		if risk != tool.RiskLow {
			return
		}
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		if len(file.Stmts) != 1 || !ok {
			t.Fatalf("%q is low risk but not one simple command", command)
		}
		name, _ := literal(call.Args[0])
		if _, listed := readOnly[name.value]; !listed {
			t.Fatalf("%q is low risk but %q is not read-only", command, name.value)
		}
	})
}
