package shell

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
	"mvdan.cc/sh/v3/syntax"
)

// globPolicy says how a read-only command may take words that bash can
// expand into file names.
type globPolicy int

const (
	// anyGlob: none of the command's options writes or runs anything, so a
	// file name that looks like an option is harmless.
	anyGlob globPolicy = iota
	// prefixGlob: only patterns that start with text other than "-", so
	// that no file name they become is read as an option.
	prefixGlob
	// noGlob: none; how many operands there are, or which, matters.
	noGlob
)

// readOnlyRule says when a command is read-only: ok checks its arguments
// (nil accepts any), globs how patterns may appear in them.
type readOnlyRule struct {
	globs globPolicy
	ok    func(args []string) bool
}

// plain is the rule of the commands none of whose options writes or runs
// anything: any arguments.
var plain = readOnlyRule{globs: anyGlob}

// readOnly lists the commands that count as read-only, and the arguments
// with which they do. Anything else is high risk.
var readOnly = map[string]readOnlyRule{
	"ls": plain, "cat": plain, "head": plain, "tail": plain, "wc": plain, "pwd": plain, "echo": plain,
	"grep": plain, "egrep": plain, "fgrep": plain, "stat": plain, "du": plain, "df": plain,
	"which": plain, "type": plain, "uname": plain, "whoami": plain, "id": plain, "diff": plain,
	"rg":   {prefixGlob, func(args []string) bool { return !slices.ContainsFunc(args, isPreprocessor) }},
	"find": {prefixGlob, func(args []string) bool { return !slices.ContainsFunc(args, isFindAction) }},
	"file": {prefixGlob, noOption("C", "compile")},
	"sort": {prefixGlob, noOption("o", "output", "compress-program")},
	"tree": {prefixGlob, noOption("oR")},
	"date": {noGlob, noOption("s", "set")},
	"uniq": {noGlob, uniqReadOnly},
	"git":  {noGlob, gitReadOnly},
}

// readsNoFiles are the read-only commands whose arguments never name a file
// they read.
var readsNoFiles = []string{"echo", "pwd", "which", "type", "uname", "whoami", "id", "date"}

// leavesRoot reports whether arg, taken as a path — or an option's value:
// --file=/x, -f/x — leads outside the workspace, lexically or through a
// symbolic link. Words that are not paths (patterns, revisions) read as
// relative paths inside it and pass.
func (r *resolver) leavesRoot(arg string) bool {
	p := arg
	if strings.HasPrefix(arg, "-") {
		if _, v, ok := strings.Cut(arg, "="); ok {
			p = v
		} else if i := strings.IndexAny(arg, "/."); i > 0 {
			p = arg[i:]
		} else {
			return false
		}
	}
	if p == "" {
		return false
	}
	if r.moved {
		return filepath.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	return !within(realPath(filepath.Clean(p)), r.root)
}

// realPath follows the symbolic links of the longest part of the clean
// absolute path p that exists, and keeps the rest as it is.
func realPath(p string) string {
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// findActions are the find expressions that delete, write files or run
// programs.
var findActions = strings.Fields("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls")

func isFindAction(arg string) bool { return slices.Contains(findActions, arg) }

// isPreprocessor reports whether arg is ripgrep's --pre (a program run on
// every file) or --pre-glob.
func isPreprocessor(arg string) bool { return strings.HasPrefix(arg, "--pre") }

// commandRisk is the risk of running the command line f: [tool.RiskLow]
// when it is one plain read-only command — a single simple command without
// redirection, substitution, expansion, chaining, background or variable
// assignments, whose program is on the readOnly list with arguments that
// keep it read-only and is not a file in the workspace — and
// [tool.RiskHigh] for anything else, including what does not parse.
func commandRisk(f *syntax.File, r *resolver) tool.Risk {
	if f == nil || len(f.Stmts) != 1 {
		return tool.RiskHigh
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0 ||
		len(call.Assigns) > 0 || len(call.Args) == 0 {
		return tool.RiskHigh
	}
	words := make([]word, len(call.Args))
	for i, w := range call.Args {
		if words[i], ok = literal(w); !ok {
			return tool.RiskHigh
		}
	}
	name := words[0]
	rule, listed := readOnly[name.value]
	if !listed || name.glob {
		return tool.RiskHigh
	}
	args := make([]string, 0, len(words)-1)
	for _, w := range words[1:] {
		if w.glob && (rule.globs == noGlob || rule.globs == prefixGlob && (w.prefix == "" || w.prefix[0] == '-')) {
			return tool.RiskHigh
		}
		args = append(args, w.value)
	}
	if rule.ok != nil && !rule.ok(args) {
		return tool.RiskHigh
	}
	// Reading is harmless only inside the workspace: cat ~/.ssh/id_rsa or
	// grep -r key /etc would hand a model what it was never given.
	if !slices.Contains(readsNoFiles, name.value) && slices.ContainsFunc(args, r.leavesRoot) {
		return tool.RiskHigh
	}
	// A program of that name in the workspace (on a PATH that reaches it)
	// is not the system's read-only one.
	if !slices.Contains(builtins, name.value) {
		if p := r.program(name.value); p != "" && within(p, r.root) {
			return tool.RiskHigh
		}
	}
	return tool.RiskLow
}

// noOption returns a check that refuses the short options whose letters are
// in short (also inside a group such as -rno) and the long options in long
// (also abbreviated, as getopt accepts them: --out for --output), before a
// "--" that ends the options.
func noOption(short string, long ...string) func(args []string) bool {
	return func(args []string) bool {
		for _, a := range args {
			switch {
			case a == "--":
				return true
			case strings.HasPrefix(a, "--"):
				name, _, _ := strings.Cut(a[2:], "=")
				if slices.ContainsFunc(long, func(l string) bool { return strings.HasPrefix(l, name) }) {
					return false
				}
			case len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], short):
				return false
			}
		}
		return true
	}
}

// uniqFlags are uniq's long options that take no value as a separate word.
var uniqFlags = strings.Fields("count repeated all-repeated unique ignore-case zero-terminated group")

// uniqReadOnly reports whether uniq has at most one operand: a second one
// is the file it writes.
func uniqReadOnly(args []string) bool {
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands += len(args) - i - 1
			i = len(args)
		case strings.HasPrefix(a, "--"):
			if name, _, valued := strings.Cut(a[2:], "="); !valued && !slices.Contains(uniqFlags, name) {
				return false // it may take the next word as its value: not sure what is an operand
			}
		case len(a) > 1 && a[0] == '-':
			// -f, -s and -w take a value: the rest of the group, or the next word.
			if k := strings.IndexAny(a[1:], "fsw"); k == len(a)-2 {
				i++
			}
		default:
			operands++
		}
	}
	return operands <= 1
}

// gitSafe are git's options before the subcommand that change nothing.
var gitSafe = strings.Fields("--no-pager -P --no-optional-locks")

// gitReadOnly reports whether git's arguments are a read-only subcommand:
// status, log, diff, show, rev-parse, ls-files or blame (without writing
// their output to a file or running an external diff), branch listing
// branches, or remote -v. Options before the subcommand other than -C DIR
// and gitSafe (-c, --git-dir, --exec-path, …) make it high risk.
func gitReadOnly(args []string) bool {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case slices.Contains(gitSafe, args[0]):
			args = args[1:]
		case args[0] == "-C" && len(args) > 1:
			args = args[2:]
		default:
			return false
		}
	}
	if len(args) == 0 {
		return false
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "blame":
		return noOption("o", "output", "ext-diff")(rest)
	case "branch":
		return gitBranchLists(rest)
	case "remote":
		return len(rest) == 0 || len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")
	}
	return false
}

// git branch's options that only change how branches are listed:
// branchFlags take no value, branchOptional take one only after "=", and
// branchValued one after "=" or as the next word (whatever it is: git
// takes it).
var (
	branchFlags    = strings.Fields("--all --remotes --verbose --show-current --list --no-color --color --column --no-column --ignore-case --omit-empty --no-abbrev --abbrev")
	branchOptional = strings.Fields("--color --column --abbrev")
	branchValued   = strings.Fields("--contains --no-contains --merged --no-merged --points-at --sort --format")
)

// gitBranchLists reports whether git branch's arguments only list
// branches: listing options, and patterns only with --list or -l (without
// it, a name creates a branch).
func gitBranchLists(args []string) bool {
	list := slices.ContainsFunc(args, func(a string) bool {
		return a == "--list" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "l")
	})
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, valued := strings.Cut(a, "=")
		switch {
		case slices.Contains(branchFlags, a):
		case valued && slices.Contains(branchOptional, name):
		case slices.Contains(branchValued, name):
			if !valued {
				i++
			}
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if strings.Trim(a[1:], "arvil") != "" {
				return false
			}
		case !strings.HasPrefix(a, "-") && list:
			// a pattern of the branches to list
		default:
			return false
		}
	}
	return true
}
