package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// project is a small tree with ignored files, a .git directory and a
// binary.
var project = map[string]string{
	".gitignore":          "*.log\nbuild/\n!keep.log\n/top-only.txt\n",
	".git/HEAD":           "ref: refs/heads/main\n",
	"README.md":           "# Demo\nSee main.go.\n",
	"main.go":             "package main\n\nfunc main() {\n\tHello()\n}\n",
	"pkg/hello.go":        "package pkg\n\n// Hello greets.\nfunc Hello() string {\n\treturn \"hello\"\n}\n",
	"pkg/hello_test.go":   "package pkg\n\nfunc TestHello(t *testing.T) { Hello() }\n",
	"pkg/.gitignore":      "generated.go\n",
	"pkg/generated.go":    "package pkg\n// Hello generated\n",
	"debug.log":           "Hello from the log\n",
	"keep.log":            "Hello kept\n",
	"build/out.go":        "package build // Hello\n",
	"top-only.txt":        "Hello top\n",
	"docs/top-only.txt":   "Hello nested\n",
	"assets/logo.bin":     "Hello\x00\x01\x02",
	"docs/guide/intro.md": "Intro\n",
}

func TestLs(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, project)
		got := e.ok(t, "ls", map[string]any{})
		want := ".git/\n.gitignore\nREADME.md\nassets/\nbuild/\ndebug.log\ndocs/\nkeep.log\nmain.go\npkg/\ntop-only.txt"
		if got != want {
			t.Fatalf("ls:\n%s\nwant\n%s", got, want)
		}
		got = e.ok(t, "ls", map[string]any{"path": "docs", "depth": 3})
		if got != "docs/guide/\ndocs/guide/intro.md\ndocs/top-only.txt" {
			t.Fatalf("ls docs depth 3:\n%s", got)
		}
		got = e.ok(t, "ls", map[string]any{"depth": 2, "ignore": []string{"*.go", "docs"}})
		for _, unwanted := range []string{"main.go", "pkg/hello.go", "docs/", ".git/HEAD"} {
			if strings.Contains(got, unwanted+"\n") || strings.HasSuffix(got, unwanted) {
				t.Errorf("ls with ignore shows %s:\n%s", unwanted, got)
			}
		}
		contains(t, got, "pkg/.gitignore", ".git/\n")
		got = e.ok(t, "ls", map[string]any{"depth": 3, "limit": 4})
		contains(t, got, ".git/\n.gitignore\nREADME.md\nassets/\n\n[Showing 4 of 20 entries.", "raise limit (at most 5000)")
		contains(t, e.fails(t, "ls", map[string]any{"path": "main.go"}), "main.go is a file", "Use read")
		contains(t, e.fails(t, "ls", map[string]any{"ignore": []string{"["}}), "not a valid glob")
		e.put(t, map[string]string{"empty/.keep": ""})
		if err := e.b.Remove(t.Context(), "empty/.keep"); err != nil {
			t.Fatal(err)
		}
		contains(t, e.ok(t, "ls", map[string]any{"path": "empty"}), "(empty is empty)")
	})
	e := localEnv(t)
	e.put(t, map[string]string{"a.txt": "a"})
	if err := os.Symlink("a.txt", filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	if got := e.ok(t, "ls", map[string]any{}); got != "a.txt\nlink@" {
		t.Fatalf("ls with a link: %q", got)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, project)
		cases := []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"pattern": "*.go"}, "main.go\npkg/hello.go\npkg/hello_test.go"},
			{map[string]any{"pattern": "*.log"}, "keep.log"},
			{map[string]any{"pattern": "top-only.txt"}, "docs/top-only.txt"},
			{map[string]any{"pattern": "pkg/*_test.go"}, "pkg/hello_test.go"},
			{map[string]any{"pattern": "**/*.md"}, "README.md\ndocs/guide/intro.md"},
			{map[string]any{"pattern": "*.{md,go}", "path": "docs"}, "docs/guide/intro.md"},
			{map[string]any{"pattern": "guide"}, "docs/guide/"},
			{map[string]any{"pattern": "HEAD"}, `No files match "HEAD" in the workspace.`},
		}
		for _, c := range cases {
			if got := e.ok(t, "find", c.args); got != c.want {
				t.Errorf("find %v:\n%s\nwant\n%s", c.args, got, c.want)
			}
		}
		got := e.ok(t, "find", map[string]any{"pattern": "*", "limit": 3})
		contains(t, got, ".gitignore\nREADME.md\nassets/\n\n[Showing the first 3 of 14 matches. Narrow the pattern or the path, or raise limit (at most 10000).]")
		contains(t, e.fails(t, "find", map[string]any{"pattern": "a[", "path": "."}), "not a valid glob")
		contains(t, e.fails(t, "find", map[string]any{"pattern": "*", "path": "main.go"}), "main.go is a file")
		contains(t, e.fails(t, "find", map[string]any{"pattern": "*", "path": "nowhere"}), "nowhere does not exist")
	})
}

func TestGrep(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, project)
		got := e.ok(t, "grep", map[string]any{"pattern": "Hello"})
		want := "docs/top-only.txt:1:Hello nested\nkeep.log:1:Hello kept\nmain.go:4:\tHello()\npkg/hello.go:3:// Hello greets.\npkg/hello.go:4:func Hello() string {\npkg/hello_test.go:3:func TestHello(t *testing.T) { Hello() }\n(1 binary file skipped)"
		if got != want {
			t.Fatalf("grep Hello:\n%s\nwant\n%s", got, want)
		}
		for _, c := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"pattern": "^func \\w+\\(\\)", "glob": "*.go"}, "main.go:3:func main() {\npkg/hello.go:4:func Hello() string {"},
			{map[string]any{"pattern": "hello()", "literal": true, "ignoreCase": true}, "main.go:4:\tHello()\npkg/hello.go:4:func Hello() string {\npkg/hello_test.go:3:func TestHello(t *testing.T) { Hello() }\n(1 binary file skipped)"},
			{map[string]any{"pattern": "hello()", "literal": true}, "No matches for \"hello()\" in the workspace.\n(1 binary file skipped)"},
			{map[string]any{"pattern": "HELLO", "ignoreCase": true, "path": "pkg/hello.go"}, "pkg/hello.go:3:// Hello greets.\npkg/hello.go:4:func Hello() string {\npkg/hello.go:5:\treturn \"hello\""},
			{map[string]any{"pattern": "Hello", "path": "docs"}, "docs/top-only.txt:1:Hello nested"},
			{map[string]any{"pattern": "return", "context": 1, "glob": "pkg/*.go"}, "pkg/hello.go-4-func Hello() string {\npkg/hello.go:5:\treturn \"hello\"\npkg/hello.go-6-}"},
			{map[string]any{"pattern": "Hello", "path": "debug.log"}, "debug.log:1:Hello from the log"},
		} {
			if got := e.ok(t, "grep", c.args); got != c.want {
				t.Errorf("grep %v:\n%s\nwant\n%s", c.args, got, c.want)
			}
		}
		contains(t, e.fails(t, "grep", map[string]any{"pattern": "a(b"}), "not a valid regular expression", "literal")
		contains(t, e.fails(t, "grep", map[string]any{"pattern": "x", "path": "assets/logo.bin"}), "binary file")
		contains(t, e.fails(t, "grep", map[string]any{"pattern": "x", "glob": "[", "path": "."}), "not valid")
	})
}

func TestGrepContextAndLimits(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		var b strings.Builder
		for i := 1; i <= 30; i++ {
			if i%10 == 0 {
				fmt.Fprintf(&b, "match %d\n", i)
			} else {
				fmt.Fprintf(&b, "line %d\n", i)
			}
		}
		e.put(t, map[string]string{
			"a.txt":    b.String(),
			"b.txt":    "match b\n",
			"long.txt": "x" + strings.Repeat("é", 600) + " match\n",
			"many.txt": numbered(500, "match %d"),
		})
		got := e.ok(t, "grep", map[string]any{"pattern": "match", "context": 2, "glob": "[ab].txt"})
		want := "a.txt-8-line 8\na.txt-9-line 9\na.txt:10:match 10\na.txt-11-line 11\na.txt-12-line 12\n--\na.txt-18-line 18\na.txt-19-line 19\na.txt:20:match 20\na.txt-21-line 21\na.txt-22-line 22\n--\na.txt-28-line 28\na.txt-29-line 29\na.txt:30:match 30\n--\nb.txt:1:match b"
		if got != want {
			t.Fatalf("context:\n%s\nwant\n%s", got, want)
		}
		got = e.ok(t, "grep", map[string]any{"pattern": "match", "path": "long.txt"})
		if !strings.HasPrefix(got, "long.txt:1:x") || !strings.HasSuffix(got, "x"+strings.Repeat("é", 499)+"…") {
			t.Fatalf("long line: %q", got)
		}
		got = e.ok(t, "grep", map[string]any{"pattern": "match", "path": "many.txt"})
		contains(t, got, "many.txt:100:match 100\n\n[Stopped at 100 matching lines (the limit). Narrow the pattern, path or glob, or raise limit (at most 1000), to see more.]")
		if strings.Contains(got, "match 101") {
			t.Fatal("more than the limit")
		}
		got = e.ok(t, "grep", map[string]any{"pattern": "match", "limit": 3})
		want = "a.txt:10:match 10\na.txt:20:match 20\na.txt:30:match 30\n\n[Stopped at 3 matching lines"
		if !strings.HasPrefix(got, want) {
			t.Fatalf("limit 3:\n%s", got)
		}
	})
}

// TestGrepLargeFiles: files are searched as streams: a 20 MB file with the
// match at its end, a line longer than the search block, and line numbers
// that stay right across blocks.
func TestGrepLargeFiles(t *testing.T) {
	t.Parallel()
	e := localEnv(t)
	e.put(t, map[string]string{
		"big.txt":  numbered(700_000, "filler line %07d") + "needle here\n" + "after\n",
		"wide.txt": "start\n" + strings.Repeat("y", 600<<10) + "needle-in-long-line\nneedle after the long line\n",
	})
	got := e.ok(t, "grep", map[string]any{"pattern": "needle", "path": "big.txt", "context": 1})
	want := "big.txt-700000-filler line 0700000\nbig.txt:700001:needle here\nbig.txt-700002-after"
	if got != want {
		t.Fatalf("big file:\n%s\nwant\n%s", got, want)
	}
	got = e.ok(t, "grep", map[string]any{"pattern": "needle", "path": "wide.txt"})
	if got != "wide.txt:3:needle after the long line" {
		t.Fatalf("after a long line: %q", got)
	}
	got = e.ok(t, "grep", map[string]any{"pattern": "^start|fill", "path": "wide.txt"})
	if got != "wide.txt:1:start" {
		t.Fatalf("regexp with ^: %q", got)
	}
}

// TestFindNestedIgnoreFiles: each directory's .gitignore applies below it,
// a deeper one's negation re-includes, and entries whose names sort before
// ".gitignore" (read after them in a walk) are judged by it too, also when
// the search starts below the root.
func TestFindNestedIgnoreFiles(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{
			".gitignore":        "*.tmp\n",
			"a/-early.go":       "x",
			"a/.config/w.go":    "x",
			"a/.env":            "x",
			"a/.gitignore":      ".env\n-early.go\n!keep.tmp\n",
			"a/drop.tmp":        "x",
			"a/keep.tmp":        "x",
			"a/b/.gitignore":    "*.go\n",
			"a/b/x.go":          "x",
			"a/b/c/.gitignore":  "!y.go\n",
			"a/b/c/y.go":        "x",
			"a/b/c/z.go":        "x",
			"z/z.go":            "x",
			"z/.gitignore/note": "a directory named .gitignore has no rules",
		})
		for _, c := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"pattern": "*"}, ".gitignore\na/\na/.config/\na/.config/w.go\na/.gitignore\na/b/\na/b/.gitignore\na/b/c/\na/b/c/.gitignore\na/b/c/y.go\na/keep.tmp\nz/\nz/.gitignore/\nz/.gitignore/note\nz/z.go"},
			{map[string]any{"pattern": "*.go", "path": "a/b"}, "a/b/c/y.go"},
			{map[string]any{"pattern": "*", "path": "a/b/c"}, "a/b/c/.gitignore\na/b/c/y.go"},
			{map[string]any{"pattern": "*.go"}, "a/.config/w.go\na/b/c/y.go\nz/z.go"},
		} {
			if got := e.ok(t, "find", c.args); got != c.want {
				t.Errorf("find %v:\n%s\nwant\n%s", c.args, got, c.want)
			}
		}
	})
}
