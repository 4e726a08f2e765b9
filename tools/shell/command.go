package shell

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolbelt/toolbelt/internal/wrapper"
)

// parseCommand parses a command line as bash reads it.
func parseCommand(command string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
}

// word is a shell word whose value is known without running anything.
type word struct {
	value string
	// glob says the word has an unquoted pattern character (*, ? or [),
	// so bash may replace it with file names; prefix is the value before
	// the first one, which every name it becomes starts with.
	glob   bool
	prefix string
	// pattern is the value as a glob pattern: the unquoted pattern
	// characters as they are, quoted ones (and backslashes) escaped with a
	// backslash.
	pattern string
}

// globSpecial are the characters a backslash escapes in a pattern.
const globSpecial = `*?[]\`

// addQuoted appends s to a pattern with its pattern characters escaped.
func addQuoted(pat []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(globSpecial, s[i]) >= 0 {
			pat = append(pat, '\\')
		}
		pat = append(pat, s[i])
	}
	return pat
}

// literal returns the value of w when it is plain text, escapes and quotes
// only; ok is false when running the command would change it in ways that
// cannot be known beforehand: parameters, command and process substitution,
// arithmetic, brace and tilde expansion, extended globs, ANSI-C and locale
// quoting.
func literal(w *syntax.Word) (word, bool) {
	var b, pat []byte
	var out word
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			for j := 0; j < len(v); j++ {
				switch c := v[j]; {
				case c == '\\':
					if j++; j == len(v) {
						return word{}, false
					}
					if v[j] != '\n' {
						b = append(b, v[j])
						pat = addQuoted(pat, v[j:j+1])
					}
				case c == '{' && j+1 < len(v) && v[j+1] == '}':
					// {} holds nothing to expand: bash keeps it (find
					// -exec rm {} +).
					b = append(b, "{}"...)
					pat = append(pat, "{}"...)
					j++
				case c == '{' || c == '}':
					return word{}, false
				case c == '~' && (len(b) == 0 || b[len(b)-1] == '=' || b[len(b)-1] == ':'):
					return word{}, false // a tilde expansion (~user/x, a=~/x)
				case c == '*' || c == '?' || c == '[':
					if !out.glob {
						out.glob, out.prefix = true, string(b)
					}
					b = append(b, c)
					pat = append(pat, c)
				default:
					b = append(b, c)
					pat = append(pat, c)
				}
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return word{}, false
			}
			b = append(b, p.Value...)
			pat = addQuoted(pat, p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return word{}, false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return word{}, false
				}
				v := l.Value
				for j := 0; j < len(v); j++ {
					if v[j] == '\\' && j+1 < len(v) && strings.IndexByte("$`\"\\\n", v[j+1]) >= 0 {
						if j++; v[j] == '\n' {
							continue
						}
					}
					b = append(b, v[j])
					pat = addQuoted(pat, v[j:j+1])
				}
			}
		default:
			return word{}, false
		}
	}
	out.value, out.pattern = string(b), string(pat)
	return out, true
}

// leading returns the values of the words at the start of args that are
// literal, up to the first that is not.
func leading(args []*syntax.Word) []string {
	var out []string
	for _, w := range args {
		l, ok := literal(w)
		if !ok {
			break
		}
		out = append(out, l.value)
	}
	return out
}

// builtins are bash's builtin commands and keywords: they start no program.
var builtins = strings.Fields(`. : [ alias bg bind break builtin caller cd command compgen complete
	compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash
	help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly
	return set shift shopt source suspend test times trap true type typeset ulimit umask unalias
	unset wait`)

// interpreters run the script file named by their first operand.
var interpreters = strings.Fields(`sh bash dash zsh ksh mksh fish python python2 python3 pypy pypy3
	node nodejs deno bun tsx ts-node ruby perl php lua luajit Rscript`)

// inlineFlags are the options after which an interpreter runs code given
// on the command line, or a module, rather than a script file.
var inlineFlags = strings.Fields(`-c -e -E -m -r -p --eval --print`)

// isInterpreter reports whether the program name runs scripts: one of
// interpreters, or a versioned python ("python3.12").
func isInterpreter(name string) bool {
	base := filepath.Base(name)
	if slices.Contains(interpreters, base) {
		return true
	}
	v, ok := strings.CutPrefix(base, "python")
	return ok && v != "" && strings.Trim(v, "0123456789.") == ""
}

// unwrap skips the programs that only run another one (exec, command,
// env, nohup, nice, timeout, xargs) and their options, and returns the command
// they run; nil when it cannot be told (an option it does not know).
func unwrap(words []string) []string {
	for len(words) > 0 {
		next, wrapped, known := unwrapOnce(words)
		if !wrapped {
			return words
		}
		if !known {
			return nil
		}
		words = next
	}
	return nil
}

// unwrapOnce returns the command the first word runs when it is a program
// that only runs another one (see runs), and wrapped false when it is not.
// known is false when an option of it is not one it is known to read (env
// -S, which splits a string into a command, is one): then which command it
// runs cannot be told.
func unwrapOnce(words []string) (rest []string, wrapped, known bool) {
	if !slices.Contains(runs, words[0]) {
		return words, false, true
	}
	if words[0] == "command" && len(words) > 1 && (words[1] == "-v" || words[1] == "-V") {
		return nil, true, true // only looks the name up
	}
	spec, _ := wrapper.Lookup(words[0])
	_, start, known := spec.Split(words[1:])
	if !known {
		return nil, true, false
	}
	rest = words[1+start:]
	if words[0] == "xargs" && len(rest) == 0 {
		rest = []string{"echo"} // what xargs runs without a command
	}
	return rest, true, true
}

// runs are the programs unwrap sees through: they run the command their
// operands name as it is, as the same user, in the same place. (Others —
// sudo, chroot, nsenter — are launchers: see programLister.command.)
var runs = strings.Fields("exec command env nohup nice timeout xargs")

// launch is what a command line starts, as far as it can be known without
// running it.
type launch struct {
	// executable is the resolved path of the first program it starts.
	executable string
	// scripts are the real paths of the files inside the workspace it runs:
	// programs, and scripts given to interpreters or to source.
	scripts []string
}

// resolver finds programs and files as the command would: relative to its
// directory and on its PATH.
type resolver struct {
	root, dir string
	path      []string // the PATH entries
	// moved is set once the command line changes directory (cd, pushd,
	// popd): relative paths after that cannot be resolved.
	moved bool
}

// launched works out what the command line f starts.
func (r *resolver) launched(f *syntax.File) launch {
	var l launch
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil {
				funcs[n.Name.Value] = true
			}
		case *syntax.CallExpr:
			r.call(unwrap(leading(n.Args)), funcs, &l)
		}
		return true
	})
	return l
}

// call adds what one simple command (its leading literal words) starts.
func (r *resolver) call(words []string, funcs map[string]bool, l *launch) {
	if len(words) == 0 || funcs[words[0]] {
		return
	}
	name, args := words[0], words[1:]
	switch {
	case name == "cd" || name == "pushd" || name == "popd":
		r.moved = true
		return
	case (name == "source" || name == ".") && len(args) > 0:
		if p := r.sourced(args[0]); p != "" {
			l.addScript(p, r.root)
		}
		return
	case slices.Contains(builtins, name):
		return
	}
	prog := r.program(name)
	if prog == "" {
		return
	}
	if l.executable == "" {
		l.executable = prog
	}
	l.addScript(prog, r.root)
	if !isInterpreter(name) {
		return
	}
	for _, a := range args {
		if slices.Contains(inlineFlags, a) {
			return
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		if p := r.file(a); p != "" {
			l.addScript(p, r.root)
			return
		}
	}
}

// addScript adds the file p when it is inside the workspace root.
func (l *launch) addScript(p, root string) {
	if within(p, root) && !slices.Contains(l.scripts, p) {
		l.scripts = append(l.scripts, p)
	}
}

// file returns the real path of the regular file name, relative to the
// command's directory, or "" when there is none (or the directory is not
// known any more).
func (r *resolver) file(name string) string {
	if !filepath.IsAbs(name) {
		if r.moved {
			return ""
		}
		name = filepath.Join(r.dir, name)
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return real
}

// program resolves a command name as bash does: a name with a slash is a
// path; any other is looked up on PATH, where it must be an executable file.
func (r *resolver) program(name string) string {
	if strings.Contains(name, "/") {
		return r.file(name)
	}
	for _, dir := range r.path {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) && r.moved {
			continue
		}
		p := r.file(filepath.Join(dir, name))
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// sourced resolves the file source reads: a name with a slash is a path;
// any other is looked up on PATH first, then in the directory.
func (r *resolver) sourced(name string) string {
	if !strings.Contains(name, "/") {
		for _, dir := range r.path {
			if filepath.IsAbs(dir) {
				if p := r.file(filepath.Join(dir, name)); p != "" {
					return p
				}
			}
		}
	}
	return r.file(name)
}

// scriptHash is the hex SHA-256 of the one script, or, for several, of
// their hashes and workspace paths, one "hash  path" line each (as
// sha256sum prints them). It is "" when there is none or one cannot be read.
func scriptHash(root string, scripts []string) string {
	var lines strings.Builder
	var last string
	for _, p := range scripts {
		sum, err := fileHash(p)
		if err != nil {
			return ""
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return ""
		}
		fmt.Fprintf(&lines, "%s  %s\n", sum, filepath.ToSlash(rel))
		last = sum
	}
	switch len(scripts) {
	case 0:
		return ""
	case 1:
		return last
	}
	sum := sha256.Sum256([]byte(lines.String()))
	return hex.EncodeToString(sum[:])
}

func fileHash(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
