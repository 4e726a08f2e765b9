package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/testlocale"
	"mvdan.cc/sh/v3/syntax"
)

// TestUnaskedScript: the script an unasked command runs keeps the command
// line's pipelines, lists, negations and redirections, and has each
// simple command's words exactly as they were checked — globs expanded,
// every word single-quoted — so that bash has nothing left to expand.
func TestUnaskedScript(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Z", "a.txt", "it's", "[x]"} {
		writeFile(t, filepath.Join(root, name), "x\n", 0o644)
	}
	for command, want := range map[string]string{
		"ls":                   `'ls'`,
		"grep -v *":            `'grep' '-v' 'Z' '[x]' 'a.txt' 'it'\''s'`,
		"cat *'s'":             `'cat' 'it'\''s'`,
		"cat [[]*":             `'cat' '[x]'`,
		"cat nothing*":         `'cat' 'nothing*'`, // no match: the word itself, which bash does not expand either
		`echo '*' "~" \$HOME`:  `'echo' '*' '~' '$HOME'`,
		"cat a.txt | wc -l":    `'cat' 'a.txt' | 'wc' '-l'`,
		"ls && ! ls Z || true": `'ls' && ! 'ls' 'Z' || 'true'`,
		"ls; pwd\necho done":   "'ls'\n'pwd'\n'echo' 'done'",
		"grep x a.txt 2>&1 >/dev/null < 'it'\\''s' 1>&-": `'grep' 'x' 'a.txt' 2>&1 >/dev/null <'it'\''s' 1>&-`,
		"wc -l a.txt |& sort":                            `'wc' '-l' 'a.txt' |& 'sort'`,
	} {
		a := analyzeCommand(command, root, root, nil, nil)
		if !a.low || a.script != want {
			t.Errorf("%q: low %v (%s), script\n%s\nwant\n%s", command, a.low, a.notLow, a.script, want)
			continue
		}
		checkScript(t, command, a.script)
	}
}

// checkScript fails the test unless script, the one command runs, parses
// as bash with every word plain text: nothing is left to expand.
func checkScript(t *testing.T, command, script string) {
	t.Helper()
	f, err := parseCommand(script)
	if err != nil {
		t.Fatalf("%q: its script %q does not parse: %v", command, script, err)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			if l, ok := literal(w); !ok || l.glob {
				t.Fatalf("%q: its script's word %q is not plain text", command, script[w.Pos().Offset():w.End().Offset()])
			}
		}
		return true
	})
}

// globNames are names that bash orders or matches differently depending
// on its version, options and locale: case, punctuation that collation
// ignores, dots, brackets, tildes, leading dashes, characters that are not
// ASCII (one character, several bytes), spaces.
var globNames = []string{
	"a", "B", "Z", "b.txt", "a.txt", "e", "é", "E.md", "ü", "ß", "日本", "Ω", "_u", "a-b", "a_b", "aB", "ab",
	".hidden", ".~x", ".local", "~t", "-x", "--y", "[x]", "x[1]", "*s", "s p", "é.txt", "1", "10", "9",
}

// globPatterns are patterns over globNames.
var globPatterns = []string{
	"*", ".*", "?", "??", "[ab]*", "[!a]*", "*.*", "[a-z]*", "[A-Z]*", "*[xX]*", "?*", ".[l~]*",
	"[~_-]*", "[é]*", "*.txt", "[[]*", "[0-9]*", "-*", "\\[*",
}

// TestUnaskedGlobsRunAsChecked compares, in the C locale, in C.UTF-8 and
// in a collating locale (en_US.UTF-8), what an unasked `echo -- PATTERN`
// prints with the checker's expansion of PATTERN, over names that bash
// orders and matches by the locale (and that bash 5.2 matches without "."
// and ".."): they are the same in every locale, contained and on the
// host, because the command runs the words that were checked. (The
// locale is the server's; t.Setenv sets it for the commands, so this test
// is not parallel.)
func TestUnaskedGlobsRunAsChecked(t *testing.T) {
	locales := []string{"C", "C.UTF-8", testlocale.Name}
	for _, mode := range []string{modeAllowlisted, modeContained} {
		for _, loc := range locales {
			t.Run(mode+"/"+loc, func(t *testing.T) {
				if loc == testlocale.Name {
					testlocale.Collating(t)
				}
				var cfg map[string]any
				if mode == modeAllowlisted {
					cfg = noBwrap
				} else if !canContain(t) {
					t.Skip("bubblewrap cannot contain commands here (not installed, or no user namespaces): apt-get install bubblewrap")
				}
				t.Setenv("LC_ALL", loc)
				t.Setenv("LANG", loc)
				e := unattended(t, cfg)
				for _, n := range globNames {
					writeFile(t, filepath.Join(e.root, n), "x\n", 0o644)
				}
				for _, pat := range globPatterns {
					l, _ := literal(mustWord(t, pat))
					checked, _, err := expandGlob(l, e.root)
					if err != nil {
						t.Fatalf("%s: %v", pat, err)
					}
					out, info := e.exec(map[string]any{"command": "echo -- " + pat}, false)
					if info.Mode != mode {
						t.Fatalf("%s ran %q, want %q", pat, info.Mode, mode)
					}
					if want := strings.Join(append([]string{"--"}, checked...), " "); out != want {
						t.Errorf("echo -- %s printed\n%s\nbut the checker expanded it to\n%s", pat, out, want)
					}
				}
			})
		}
	}
}

// mustWord parses one shell word.
func mustWord(t *testing.T, s string) *syntax.Word {
	t.Helper()
	f, err := parseCommand("echo " + s)
	if err != nil {
		t.Fatal(err)
	}
	return f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
}

// TestUnaskedGlobCollationAttack: the attack of issue 25 — with a
// collating locale bash ordered `grep -v *` as a.txt (the pattern), Z
// (a file, here a link to one outside the workspace), while the checker
// had Z as the pattern and a.txt as the one file read. The command runs
// the checked order: grep reads a.txt, never the link.
func TestUnaskedGlobCollationAttack(t *testing.T) {
	loc := testlocale.Collating(t)
	t.Setenv("LC_ALL", loc)
	t.Setenv("LANG", loc)
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "TOPSECRET\n", 0o644)
	e := unattended(t, noBwrap)
	writeFile(t, filepath.Join(e.root, "a.txt"), "alpha\n", 0o644)
	if err := os.Symlink(secret, filepath.Join(e.root, "Z")); err != nil {
		t.Fatal(err)
	}
	out, info := e.exec(map[string]any{"command": "grep -v *"}, false)
	if info.Mode != modeAllowlisted || out != "alpha" {
		t.Errorf("grep -v * ran %s and printed %q, want the one line of a.txt", info.Mode, out)
	}
}
