package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolbelt/toolbelt/tool"
)

// systemPath is the PATH commands that run without approval get, and the
// one their programs are resolved on: system directories only, never the
// workspace or the server user's own.
const systemPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// maxTreeEntries bounds the walk of a recursive command's trees; a bigger
// tree is not checked, and the command needs approval.
const maxTreeEntries = 50_000

// analysis is what can be known about a command line without running it.
type analysis struct {
	// programs are every program the command line starts, in order;
	// unsummarized says why that list may be incomplete.
	programs     []tool.Program
	unsummarized string
	// low says the command may run without approval: every command in it
	// is on the allowlist with allowed options, and every file it reads
	// stays inside the workspace. notLow says why it may not.
	low    bool
	notLow string
	// script is the command line an unasked command runs (set when low):
	// the same pipelines and lists, each simple command's arguments exactly
	// as they were checked — globs expanded here, not by the shell — and
	// every word single-quoted, so bash expands nothing again.
	script string
	// gitDirs are the directories git runs in (absolute): where it looks
	// for a repository, whose configuration must then be vetted.
	gitDirs []string
}

// analyzeCommand analyzes a command line for the workspace root (a real
// path), starting in dir (inside root), with PATH entries path for the
// programs listed to people. The directories of conceal (real paths) count
// as outside the workspace.
func analyzeCommand(command, root, dir string, path, conceal []string) analysis {
	f, err := parseCommand(command)
	if err != nil {
		return analysis{unsummarized: "the command does not parse as bash: " + err.Error(), notLow: "it does not parse"}
	}
	var a analysis
	a.programs, a.unsummarized = listPrograms(f, &resolver{root: root, dir: dir, path: path})
	c := checker{root: root, dir: dir, conceal: conceal}
	if d, ok := c.concealed(dir); ok {
		a.notLow = fmt.Sprintf("it would run in %s, Toolbelt's own data directory, which is hidden from the tools", d)
	} else if script, err := c.file(f); err != nil {
		a.notLow = err.Error()
	} else {
		a.low, a.script = true, script
		for _, g := range c.gitDirs {
			if d, ok := c.concealed(g); ok {
				a.low, a.notLow = false, fmt.Sprintf("git would run in %s, Toolbelt's own data directory, which is hidden from the tools", d)
				break
			}
		}
	}
	a.gitDirs = c.gitDirs
	return a
}

// listPrograms lists every simple command's program in f (through
// pipelines, lists, subshells, substitutions and the programs that only
// run another one), resolved on r's PATH, and says why the list may be
// incomplete.
func listPrograms(f *syntax.File, r *resolver) ([]tool.Program, string) {
	l := programLister{r: r, funcs: map[string]bool{}}
	redirected := map[syntax.Command]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if len(n.Redirs) > 0 && n.Cmd != nil {
				redirected[n.Cmd] = true
			}
		case *syntax.FuncDecl:
			if n.Name != nil {
				l.funcs[n.Name.Value] = true
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			words := leading(n.Args)
			if len(words) == 0 {
				l.note("a program is named by an expansion whose value is known only when it runs")
				return true
			}
			exact := len(words) == len(n.Args) && len(n.Assigns) == 0 && !redirected[n]
			l.command(words, exact, 0)
			if len(words) < len(n.Args) && (slices.Contains(runs, words[0]) || words[0] == "find") {
				// env $X, exec "$@", find $D -exec …: the program run may be
				// in the expansion or after it.
				l.note("a program is named by an expansion whose value is known only when it runs")
			}
		}
		return true
	})
	return l.progs, strings.Join(l.why, "; ")
}

// programLister collects the programs of a command line.
type programLister struct {
	r     *resolver
	funcs map[string]bool
	progs []tool.Program
	why   []string
}

func (l *programLister) note(s string) {
	if !slices.Contains(l.why, s) {
		l.why = append(l.why, s)
	}
}

// command lists the program of one command (its leading literal words),
// the one it wraps (env, nice, …) and the ones it runs (find -exec,
// xargs), to a bounded depth. exact says words are all of the command's
// and nothing else shapes it (see tool.Program).
func (l *programLister) command(words []string, exact bool, depth int) {
	if len(words) == 0 {
		return
	}
	if depth > 8 {
		l.note("programs are nested too deeply to follow")
		return
	}
	name := words[0]
	p := tool.Program{Name: name, Args: words[1:], Exact: exact}
	if !l.funcs[name] && !slices.Contains(builtins, name) {
		p.Path = l.r.program(name)
	}
	l.progs = append(l.progs, p)
	switch {
	case name == "eval" || name == "source" || name == ".":
		l.note(name + " runs code that is not part of the command line")
	case isInterpreter(name) && slices.ContainsFunc(words[1:], func(a string) bool { return slices.Contains(inlineFlags, a) }):
		l.note(name + " runs code given as text")
	case name == "find":
		// find -exec PROG … ;: the programs it runs are named.
		for i, w := range words {
			if i+1 < len(words) && slices.Contains(findExecs, w) {
				end := i + 1
				for end < len(words) && words[end] != ";" && words[end] != "+" {
					end++
				}
				l.command(words[i+1:end], exact, depth+1)
			}
		}
	case slices.Contains(launchers, name):
		l.note(name + " starts programs named by its arguments or input")
	}
	switch next, wrapped, known := unwrapOnce(words); {
	case wrapped && !known:
		l.note(unknownOption(name))
	case wrapped:
		l.command(next, exact, depth+1)
	}
}

// unknownOption says why the programs name runs cannot be listed.
func unknownOption(name string) string {
	return name + " is given an option that is not known to leave its operands the program it runs"
}

// findExecs are find's options that run a program; launchers run programs
// named elsewhere (their arguments, their input, a file).
var (
	findExecs = strings.Fields("-exec -execdir -ok -okdir")
	launchers = strings.Fields(`sudo doas su runuser setsid stdbuf watch parallel ionice chrt taskset
		flock chroot unshare nsenter strace ltrace gdb busybox script ssh make`)
)

// checker decides whether a command line may run without approval.
type checker struct {
	root, dir string
	conceal   []string // directories hidden from the tools (real paths)
	gitDirs   []string
	entries   int // tree entries walked so far
}

// concealed returns the directory of c.conceal that p (a real path, or one
// whose elements were checked one by one) lies in.
func (c *checker) concealed(p string) (string, bool) {
	for _, d := range c.conceal {
		if within(p, d) {
			return relTo(c.root, d), true
		}
	}
	return "", false
}

// file checks every statement of f and returns the script that runs
// them as checked (see analysis.script), one statement a line.
func (c *checker) file(f *syntax.File) (string, error) {
	if len(f.Stmts) == 0 {
		return "", errors.New("it is empty")
	}
	lines := make([]string, len(f.Stmts))
	for i, st := range f.Stmts {
		line, err := c.stmt(st)
		if err != nil {
			return "", err
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n"), nil
}

// stmt allows a statement that is a simple command or a pipeline or list
// of them, in the foreground, with only harmless redirections, and returns
// it as it runs: the operators of the command line in its order (so bash
// groups them as it would have), its words as checked.
func (c *checker) stmt(st *syntax.Stmt) (string, error) {
	if st.Background || st.Coprocess || st.Disown {
		return "", errors.New("it runs a command in the background")
	}
	var b strings.Builder
	if st.Negated {
		b.WriteString("! ")
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		args, err := c.call(cmd)
		if err != nil {
			return "", err
		}
		for i, a := range args {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(singleQuote(a))
		}
	case *syntax.BinaryCmd:
		x, err := c.stmt(cmd.X)
		if err != nil {
			return "", err
		}
		y, err := c.stmt(cmd.Y)
		if err != nil {
			return "", err
		}
		b.WriteString(x + " " + cmd.Op.String() + " " + y)
	case nil:
		return "", errors.New("it has a redirection without a command")
	default:
		return "", fmt.Errorf("it uses a compound command (%T), which is not checked", st.Cmd)
	}
	for _, r := range st.Redirs {
		text, err := c.redirect(r)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + text)
	}
	return b.String(), nil
}

// redirect allows duplicating descriptors (2>&1), discarding output
// (>/dev/null) and reading a file that passes the path check, and returns
// the redirection as it runs.
func (c *checker) redirect(r *syntax.Redirect) (string, error) {
	w, ok := literal(r.Word)
	if r.Word == nil || !ok || w.glob {
		return "", errors.New("it has a redirection whose target is not plain text")
	}
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	switch r.Op {
	case syntax.DplOut, syntax.DplIn:
		if descriptor(w.value) { // a number or "-": nothing bash could expand
			return op + w.value, nil
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		if w.value == "/dev/null" {
			return op + w.value, nil
		}
		return "", fmt.Errorf("it writes to %s", w.value)
	case syntax.RdrIn:
		if err := c.path(w.value, false, false); err != nil {
			return "", err
		}
		return op + singleQuote(w.value), nil
	}
	return "", fmt.Errorf("it has a redirection (%s) that is not allowed", r.Op)
}

// singleQuote quotes a word for bash so that it stands for itself: no
// expansion of any kind applies inside single quotes.
func singleQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// call checks one simple command — plain words only, an allowlisted
// program, allowlisted options, paths inside the workspace — and returns
// the argument vector it checked (program first), which is the one that
// runs.
func (c *checker) call(call *syntax.CallExpr) ([]string, error) {
	if len(call.Assigns) > 0 {
		return nil, errors.New("it sets variables")
	}
	if len(call.Args) == 0 {
		return nil, errors.New("it has no command")
	}
	first, ok := literal(call.Args[0])
	if !ok || first.glob {
		return nil, errors.New("its program is named by an expansion")
	}
	var args []string
	for _, w := range call.Args[1:] {
		l, ok := literal(w)
		if !ok {
			return nil, fmt.Errorf("%s has an argument with an expansion, substitution or brace", first.value)
		}
		matches, read, err := expandGlob(l, c.dir)
		if err != nil {
			return nil, err
		}
		for _, d := range read {
			if err := c.path(d, false, false); err != nil {
				return nil, err
			}
		}
		args = append(args, matches...)
	}
	name := first.value
	var p *parsedArgs
	var err error
	switch name {
	case "git":
		p, err = parseGit(args)
		if err == nil {
			// The repository of the command's own directory is vetted
			// too, with or without -C: the stricter answer.
			c.gitDirs = append(c.gitDirs, c.dir)
			if d := p.gitDir; d != "" {
				if !filepath.IsAbs(d) {
					d = filepath.Join(c.dir, d)
				}
				c.gitDirs = append(c.gitDirs, filepath.Clean(d))
			}
		}
	case "find":
		p, err = parseFind(args)
	default:
		spec, listed := allowlist()[name]
		if !listed {
			return nil, fmt.Errorf("%s is not on the allowlist of commands that run without approval", name)
		}
		p, err = parseArgs(name, spec, args)
	}
	if err != nil {
		return nil, err
	}
	for _, ps := range p.pathspecs {
		if filepath.IsAbs(ps) || slices.Contains(strings.Split(filepath.ToSlash(ps), "/"), "..") {
			return nil, fmt.Errorf("%s: %q may name a path outside the workspace", name, ps)
		}
		// A pathspec that names a file (in the directory git runs in) is
		// a file git may read: outside a repository git diff compares
		// the files it is given as plain files (an implicit --no-index),
		// and the kernel follows a link in their path.
		f := ps
		if p.gitDir != "" {
			f = p.gitDir + "/" + ps
		}
		if err := c.path(f, false, false); err != nil {
			return nil, err
		}
	}
	for _, f := range p.paths {
		if err := c.path(f, p.tree, p.follow); err != nil {
			return nil, err
		}
	}
	if p.worktree {
		if err := c.worktree(p.gitDir); err != nil {
			return nil, err
		}
	}
	return append([]string{name}, args...), nil
}

// worktree checks the work tree of the repository git finds from the
// directory gitDir (relative to the command's, or ""), whose files git
// reads and may print whatever its pathspecs (which may be patterns): none
// may have several hard links or lie in Toolbelt's data directory. Git
// reads a symbolic link itself, not its target, and its own directory
// (.git) holds no work-tree file.
func (c *checker) worktree(gitDir string) error {
	dir := c.dir
	if gitDir != "" {
		dir = filepath.Join(dir, gitDir)
		if filepath.IsAbs(gitDir) {
			dir = filepath.Clean(gitDir)
		}
	}
	top := c.root // without a repository of its own: the whole workspace
	for d := dir; within(d, c.root); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		if d == c.root {
			break
		}
	}
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s cannot be checked: %v", relTo(c.root, p), err)
		}
		if c.entries++; c.entries > maxTreeEntries {
			return fmt.Errorf("git reads a work tree of more than %d files, too many to check", maxTreeEntries)
		}
		if _, ok := c.concealed(p); ok {
			return fmt.Errorf("git's work tree holds Toolbelt's own data directory %s, which is hidden from the tools", relTo(c.root, p))
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("%s cannot be checked: %v", relTo(c.root, p), err)
		}
		if err := plainFile(st); err != nil {
			return fmt.Errorf("git reads %s, which %v", relTo(c.root, p), err)
		}
		return nil
	})
}

// path checks a file a command reads, element by element as the kernel
// resolves it (not cleaned first: link/.. is the parent of the link's
// target): starting from the command's directory (or "/"), it never leaves
// the workspace, no element of it is a symbolic link, and it is not a FIFO,
// socket or device (which could block or act); read as a tree, nothing
// below it is special or a link out of the workspace (followed, when the
// command follows links, as a tree of its own). A path whose rest does not
// exist passes: the command will fail to open it.
func (c *checker) path(name string, tree, follow bool) error {
	if name == "-" || name == "" {
		return nil // standard input: /dev/null
	}
	cur, rest := c.dir, name
	if filepath.IsAbs(name) {
		// Only the workspace's own (real) path may start it.
		r, ok := strings.CutPrefix(name, c.root)
		if !ok || r != "" && r[0] != '/' {
			return fmt.Errorf("%s is outside the workspace", name)
		}
		cur, rest = c.root, r
	}
	for _, e := range strings.Split(rest, "/") {
		switch e {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur is a real directory: its parent is real
		default:
			cur = filepath.Join(cur, e)
		}
		if !within(cur, c.root) {
			return fmt.Errorf("%s leads outside the workspace", name)
		}
		if _, ok := c.concealed(cur); ok {
			return fmt.Errorf("%s is inside Toolbelt's own data directory, which is hidden from the tools", name)
		}
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil // the command will report it missing
		}
		if err != nil {
			return fmt.Errorf("%s cannot be checked: %v", name, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s goes through the symbolic link %s", name, relTo(c.root, cur))
		}
	}
	st, err := os.Lstat(cur)
	if err != nil {
		return nil
	}
	if err := plainFile(st); err != nil {
		return fmt.Errorf("%s %v", name, err)
	}
	if tree && st.IsDir() {
		var seen map[string]bool
		if follow {
			seen = map[string]bool{}
		}
		return c.walk(cur, seen)
	}
	return nil
}

// walk checks a tree a recursive command reads: no special file, no
// symbolic link that leads out of the workspace or to a special file. With
// seen (the real directories walked so far), the command follows links:
// a link to a directory is walked too, once.
func (c *checker) walk(dir string, seen map[string]bool) error {
	if seen != nil {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s cannot be checked: %v", relTo(c.root, p), err)
		}
		if c.entries++; c.entries > maxTreeEntries {
			return fmt.Errorf("the files it reads are more than %d, too many to check", maxTreeEntries)
		}
		if _, ok := c.concealed(p); ok {
			return fmt.Errorf("%s holds Toolbelt's own data directory %s, which is hidden from the tools", relTo(c.root, dir), relTo(c.root, p))
		}
		t := d.Type()
		switch {
		case t.IsRegular() || t.IsDir():
			st, err := os.Lstat(p)
			if err != nil {
				return fmt.Errorf("%s cannot be checked: %v", relTo(c.root, p), err)
			}
			if err := plainFile(st); err != nil {
				return fmt.Errorf("%s %v", relTo(c.root, p), err)
			}
			return nil
		case t&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(p)
			if _, hidden := c.concealed(real); err != nil || !within(real, c.root) || hidden {
				return fmt.Errorf("%s is a symbolic link that leads out of the workspace (or nowhere)", relTo(c.root, p))
			}
			st, err := os.Stat(real)
			if err != nil || !st.Mode().IsRegular() && !st.IsDir() {
				return fmt.Errorf("%s is a symbolic link to a special file", relTo(c.root, p))
			}
			if err := plainFile(st); err != nil {
				return fmt.Errorf("%s leads to a file that %v", relTo(c.root, p), err)
			}
			if seen != nil && st.IsDir() {
				return c.walk(real, seen)
			}
			return nil
		}
		return fmt.Errorf("%s is a special file (%s): reading it may block or act", relTo(c.root, p), t)
	})
}

// plainFile refuses what reading may not safely do: a FIFO, socket or
// device (which may block or act), and a regular file with several hard
// links (another of which may be a file outside the workspace: hard links
// reach through any sandbox).
func plainFile(st fs.FileInfo) error {
	switch {
	case st.IsDir():
		return nil
	case !st.Mode().IsRegular():
		return fmt.Errorf("is a special file (%s): reading it may block or act", st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return fmt.Errorf("has %d hard links: another may be a file outside the workspace", sys.Nlink)
	}
	return nil
}

// relTo names p relative to the workspace for messages.
func relTo(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil {
		return rel
	}
	return p
}
