package audit

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/toolbelt/toolbelt/internal/wrapper"
)

// redactCommand is RedactText for a shell command, which must stay the
// command that ran: a rule's replacements are made only when the command
// still parses, as bash reads it, to the same syntax tree — the same
// statements, operators, redirections, quoting and word boundaries, the
// same names of the programs it starts, of the variables it sets and of
// the functions it defines — and the same holds for each script the
// command hands to a shell (bash -c TEXT, eval, a here-document or a pipe
// into sh). Only the text of arguments, values and here-documents changes.
// A replacement that would change more is not made, and the secret stays
// visible: the audit shows what ran before it hides a secret.
func redactCommand(s string) string {
	var v verifier
	return redact(s, v.accept)
}

// maxRefusals bounds how many times replacements that would change a
// command are tried: a command crafted so that hundreds of them would
// keeps the rest of its secrets visible rather than stall the call.
const maxRefusals = 16

// verifier accepts the replacements that keep a command's shape.
type verifier struct {
	want     string
	known    bool
	refusals int
}

// accept makes those of es that keep s's shape: all of them when they do
// together (one parse), else each half on its own.
func (v *verifier) accept(s string, es []edit) string {
	if !v.known {
		v.want, v.known = shape(s), true
	}
	if len(es) == 0 || v.refusals >= maxRefusals {
		return s
	}
	if t := applyEdits(s, es); shape(t) == v.want {
		return t
	}
	v.refusals++
	if len(es) == 1 {
		return s
	}
	// The later half first: making it leaves the earlier half's offsets
	// as they are.
	mid := len(es) / 2
	s = v.accept(s, es[mid:])
	return v.accept(s, es[:mid])
}

// shape renders what a command runs, for comparison: its syntax tree with
// the text of its literals left out, except the names of the programs it
// starts (see programs), of variables, functions and here-document
// delimiters; and the shape of each script it hands to a shell.
func shape(src string) string {
	var sh shaper
	sh.script(src, 0)
	return sh.b.String()
}

// maxScriptDepth bounds how deep shape follows scripts inside scripts.
const maxScriptDepth = 4

type shaper struct{ b strings.Builder }

// script records the statements of src. After a line that does not parse
// it goes on with the next line, as an interactive shell does (bash -c
// stops there, after running the lines before it): every line that may
// have run is recorded.
func (sh *shaper) script(src string, depth int) {
	if depth > maxScriptDepth {
		return
	}
	sh.b.WriteString("{")
	defer sh.b.WriteString("}")
	line := uint(1)
	for {
		var err error
		for st, e := range syntax.NewParser(syntax.Variant(syntax.LangBash)).StmtsSeq(strings.NewReader(src)) {
			if e != nil {
				err = e
				break
			}
			sh.stmt(st, depth)
		}
		if err == nil {
			return
		}
		n := errorLine(err)
		fmt.Fprintf(&sh.b, "!%d", line+n-1)
		if n == 0 {
			return
		}
		next := 0
		for range n {
			i := strings.IndexByte(src[next:], '\n')
			if i < 0 {
				return
			}
			next += i + 1
		}
		src, line = src[next:], line+n
	}
}

// errorLine returns the line of a parse error (1-based), or 0.
func errorLine(err error) uint {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return pe.Pos.Line()
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return le.Pos.Line()
	}
	return 0
}

// stmt records one statement's tree.
func (sh *shaper) stmt(st *syntax.Stmt, depth int) {
	syntax.Walk(st, func(n syntax.Node) bool {
		if n == nil {
			sh.b.WriteByte(')')
			return true
		}
		if _, ok := n.(*syntax.Lit); ok {
			return false // literal text, however the parser splits it
		}
		fmt.Fprintf(&sh.b, "%T(", n)
		switch n := n.(type) {
		case *syntax.Stmt:
			fmt.Fprintf(&sh.b, "%t%t%t%t%t", n.Negated, n.Background, n.Coprocess, n.Disown, n.Semicolon.IsValid())
			if c, ok := n.Cmd.(*syntax.CallExpr); ok && readsScript(c.Args) {
				for _, r := range n.Redirs {
					sh.input(r, depth)
				}
			}
		case *syntax.CallExpr:
			sh.command(n.Args, depth)
		case *syntax.BinaryCmd:
			sh.b.WriteString(n.Op.String())
			if c, ok := n.Y.Cmd.(*syntax.CallExpr); ok && (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && readsScript(c.Args) {
				sh.piped(n.X, depth)
			}
		case *syntax.Redirect:
			sh.b.WriteString(n.Op.String())
			if n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
				sh.name(n.Word)
			}
		case *syntax.Assign:
			fmt.Fprintf(&sh.b, "%t%t", n.Append, n.Naked)
			if n.Name != nil {
				sh.b.WriteString(n.Name.Value)
			}
		case *syntax.DeclClause:
			sh.b.WriteString(n.Variant.Value)
		case *syntax.FuncDecl:
			if n.Name != nil {
				sh.b.WriteString(n.Name.Value)
			}
		case *syntax.SglQuoted:
			fmt.Fprintf(&sh.b, "%t", n.Dollar)
		case *syntax.DblQuoted:
			fmt.Fprintf(&sh.b, "%t", n.Dollar)
		}
		return true
	})
}

// name records the literal text of a word that names something (a
// program, a delimiter); what is not literal in it is recorded by its
// own nodes.
func (sh *shaper) name(w *syntax.Word) {
	sh.b.WriteByte('<')
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			sh.b.WriteString(p.Value)
		case *syntax.SglQuoted:
			sh.b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					sh.b.WriteString(l.Value)
				}
			}
		}
		sh.b.WriteByte('|')
	}
	sh.b.WriteByte('>')
}

// command records the programs a simple command starts: its first word,
// the programs the wrappers in front of it start (sudo, env, timeout,
// xargs, find -exec, …), and the scripts it hands to a shell.
func (sh *shaper) command(words []*syntax.Word, depth int) {
	for len(words) > 0 {
		sh.name(words[0])
		prog := path.Base(value(words[0]))
		args := words[1:]
		switch {
		case prog == "eval":
			var b strings.Builder
			for _, a := range args {
				b.WriteString(value(a) + " ")
			}
			sh.script(b.String(), depth+1)
			return
		case slices.Contains(shells, prog):
			if script, ok := shellScript(args); ok {
				sh.script(value(script), depth+1)
			} else if file := operands(args, shellValued); len(file) > 0 {
				sh.name(file[0])
			}
			return
		case prog == "find":
			for i, a := range args {
				if slices.Contains(findExecs, value(a)) {
					end := i + 1
					for end < len(args) && value(args[end]) != ";" && value(args[end]) != "+" {
						end++
					}
					sh.command(args[i+1:end], depth)
				}
			}
			return
		}
		w, ok := wrapper.Lookup(prog)
		if !ok {
			return
		}
		vals := make([]string, len(args))
		for i, a := range args {
			vals[i] = value(a)
		}
		// An option the wrapper is not known to read is taken as one
		// without a value: a guess either way.
		own, start, _ := w.Split(vals)
		for _, a := range args[own:start] {
			sh.name(a)
		}
		words = args[start:]
	}
}

// input records the script a shell reads from a here-document or
// here-string.
func (sh *shaper) input(r *syntax.Redirect, depth int) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if s, err := expand.Document(noEnv(), r.Hdoc); err == nil {
			sh.script(s, depth+1)
		}
	case syntax.WordHdoc:
		sh.script(value(r.Word), depth+1)
	}
}

// piped records what the commands before a pipe into a shell write to it
// as the command shows it: the arguments of echo and printf, and
// here-documents, each read as a script.
func (sh *shaper) piped(x *syntax.Stmt, depth int) {
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 && slices.Contains(printers, path.Base(value(n.Args[0]))) {
				for _, a := range n.Args[1:] {
					sh.script(value(a), depth+1)
				}
			}
		case *syntax.Redirect:
			sh.input(n, depth)
		}
		return true
	})
}

// value is a word's value when it is known without running anything
// (variables count as empty), else "".
func value(w *syntax.Word) string {
	s, err := expand.Literal(noEnv(), w)
	if err != nil {
		return ""
	}
	return s
}

// noEnv is a fresh expansion configuration (the package's shared default
// is modified as it is used) in which every variable is set and empty, so
// that "~name" looks up no user.
func noEnv() *expand.Config {
	return &expand.Config{Env: emptyEnviron{}}
}

type emptyEnviron struct{}

func (emptyEnviron) Get(string) expand.Variable {
	return expand.Variable{Set: true, Kind: expand.String}
}

func (emptyEnviron) Each(func(string, expand.Variable) bool) {}

// shells are the programs that run a script: given with -c, as a file, or
// on their standard input.
var shells = strings.Fields("sh bash dash zsh ksh mksh ash yash posh")

// printers are the programs that write their arguments.
var printers = []string{"echo", "printf"}

// shellValued are a shell's options that take a separate value.
const shellValued = "-o +o -O +O --rcfile --init-file"

// shellScript returns the script a shell runs from its arguments: the
// first operand when an option holds c (-c, -ec, -lc, …).
func shellScript(args []*syntax.Word) (*syntax.Word, bool) {
	c := false
	for _, a := range args {
		v := value(a)
		if v == "--" || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
			break
		}
		if !strings.HasPrefix(v, "--") && strings.Contains(v, "c") {
			c = true
		}
	}
	if ops := operands(args, shellValued); c && len(ops) > 0 {
		return ops[0], true
	}
	return nil, false
}

// readsScript says whether a command is a shell that reads its script on
// standard input: no -c and no script file, or -s.
func readsScript(words []*syntax.Word) bool {
	if len(words) == 0 || !slices.Contains(shells, path.Base(value(words[0]))) {
		return false
	}
	args := words[1:]
	if _, ok := shellScript(args); ok {
		return false
	}
	s := slices.ContainsFunc(args, func(a *syntax.Word) bool {
		v := value(a)
		return strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "s")
	})
	return s || len(operands(args, shellValued)) == 0
}

// operands returns args after the options at their start; those in valued
// take the next word as their value, and "--" ends them.
func operands(args []*syntax.Word, valued string) []*syntax.Word {
	takes := strings.Fields(valued)
	for len(args) > 0 {
		v := value(args[0])
		if v == "--" {
			return args[1:]
		}
		if len(v) < 2 || v[0] != '-' && v[0] != '+' {
			return args
		}
		if slices.Contains(takes, v) && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	return args
}

// findExecs are find's options followed by a program it runs.
var findExecs = strings.Fields("-exec -execdir -ok -okdir")
