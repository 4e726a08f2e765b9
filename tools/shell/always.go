package shell

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolbelt/toolbelt/tool"
)

// What an "allow always" answer to a call of exec covers, as the person
// asked is told.
const (
	alwaysLine      = "this exact command line, in this workspace"
	alwaysWorkspace = "this command, while the workspace's files stay as they are now"
)

// codeFreePrograms are the programs known to run no code from the
// workspace, with any arguments: none of them has an option that runs a
// program, loads a module or reads a script, and none writes what it reads
// to a file (so none can carry a workspace file to where it would run
// later). Everything else — interpreters, build tools, test runners,
// package managers, git (hooks, aliases, configuration), programs that
// copy files, and every program not listed — may run workspace code.
var codeFreePrograms = strings.Fields(`cat ls head tail wc tr cut paste nl fold od base64 basename
	dirname realpath readlink stat du df date sleep seq comm cmp md5sum sha1sum sha256sum sha512sum
	uname id whoami mkdir rmdir rm touch chmod grep diff`)

// codeFreeBuiltins are the shell builtins that run no code: bash finds them
// before any program of the same name.
var codeFreeBuiltins = strings.Fields(`cd pwd echo true false :`)

// bindAlways says what an "allow always" answer to a call of exec that
// needs approval covers. A command line that runs no workspace code (see
// codeFree) is bound to itself (and to what the fingerprint holds: its
// directory and resolved programs). Any other may run files of the
// workspace that the model can rewrite after the approval — a Makefile, a
// package.json, a test, a script read from standard input or sourced — so
// it is bound to the hash of every file of the workspace as well: a
// changed file asks again. When the workspace cannot be hashed (too big,
// unreadable), "always" is not offered.
func (m *Manager) bindAlways(ctx context.Context, e *tool.Effects, root, workdir string, hostPath, conceal []string, in execInput) error {
	if codeFree(in, root, &resolver{root: root, dir: workdir, path: hostPath}) {
		e.AlwaysCovers = alwaysLine
		return nil
	}
	h, err := m.trees.hash(ctx, root, conceal)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		e.NoAlways = err.Error()
	default:
		e.WorkspaceHash, e.AlwaysCovers = h, alwaysWorkspace
	}
	return nil
}

// codeFree reports whether a call of exec runs no code from the workspace,
// by construction: it sets no variables, its PATH (r.path) has no entry
// that is relative or inside the workspace, and its command line is made
// only of simple commands of code-free programs and builtins (named by
// their plain name or an absolute path, found outside the workspace),
// pipelines, lists, subshells, groups, command and process substitutions,
// redirections that read or that discard output, and words of plain text,
// quotes and globs. Anything else — a variable or parameter expansion, an
// arithmetic expansion or command, [[ ]], a loop, a function, an
// assignment, a declaration — may turn data read from the workspace into
// code (bash evaluates array subscripts, ${x@P}, ${!x} …) and is not.
func codeFree(in execInput, root string, r *resolver) bool {
	if len(in.Env) > 0 {
		return false
	}
	for _, dir := range r.path {
		if !filepath.IsAbs(dir) || within(realPrefix(dir), root) {
			return false
		}
	}
	f, err := parseCommand(in.Command)
	if err != nil {
		return false
	}
	free := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case nil, *syntax.File, *syntax.Stmt, *syntax.BinaryCmd, *syntax.Subshell, *syntax.Block,
			*syntax.Word, *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.CmdSubst,
			*syntax.ProcSubst, *syntax.Comment:
		case *syntax.Redirect:
			free = free && codeFreeRedirect(n)
		case *syntax.CallExpr:
			free = free && len(n.Assigns) == 0 && len(n.Args) > 0 && r.codeFreeProgram(n.Args[0])
		default:
			free = false
		}
		return free
	})
	return free
}

// codeFreeRedirect reports whether a redirection only reads, duplicates or
// closes a descriptor, or discards output: one that writes a file could
// copy a workspace file to where it runs later (>&name writes one too).
func codeFreeRedirect(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	}
	w, ok := literal(r.Word)
	if r.Word == nil || !ok || w.glob {
		return false
	}
	switch r.Op {
	case syntax.DplIn, syntax.DplOut:
		return descriptor(w.value)
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		return w.value == "/dev/null"
	}
	return false
}

// codeFreeProgram reports whether the program a command names is a
// code-free builtin, or a code-free program named by its plain name (or an
// absolute path) that resolves outside the workspace.
func (r *resolver) codeFreeProgram(w *syntax.Word) bool {
	l, ok := literal(w)
	if !ok || l.glob {
		return false
	}
	name := l.value
	if slices.Contains(codeFreeBuiltins, name) {
		return true
	}
	if strings.Contains(name, "/") && !filepath.IsAbs(name) || !slices.Contains(codeFreePrograms, filepath.Base(name)) {
		return false
	}
	p := r.program(name)
	return p != "" && !within(p, r.root)
}

// descriptor reports whether the target of a >& or <& redirection is a
// descriptor number or "-" (closing), not a file name.
func descriptor(target string) bool {
	return target == "-" || strings.Trim(target, "0123456789") == ""
}

// realPrefix returns the real path of p, or, when p does not exist, of its
// longest leading part that does, with the rest appended: where a file
// created at p would be.
func realPrefix(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// checkApproved refuses to start a command that was approved for the
// workspace's files as they were then (see bindAlways) when one has
// changed since — written by a call running at the same time, between the
// approval and now: the approval does not cover that code. It is checked
// just before the command starts.
func (m *Manager) checkApproved(ctx context.Context, root string, conceal []string) error {
	a := tool.ApprovedEffects(ctx)
	if tool.ApprovalOf(ctx) != tool.ApprovalGiven || a == nil || a.WorkspaceHash == "" {
		return nil
	}
	h, err := m.trees.hash(ctx, root, conceal)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the call was cancelled before the command started: %w", ctx.Err())
	case err != nil:
		return tool.InputErrorf("the command was not run: it was approved for the workspace's files as they were, and they cannot be checked now (%v). Run it again to be asked anew", err)
	case h != a.WorkspaceHash:
		return tool.InputErrorf("the command was not run: a file of the workspace changed after it was approved, and the approval covers the workspace's files as they were then. Run it again to be asked anew")
	}
	return nil
}
