package shell

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The allowlist of the commands that may run without a person's approval.
// Each command lists every option it may have; an option not listed, an
// abbreviated long option, or an operand of a kind the command does not
// take makes the command high risk. Nothing here is a judgement of what an
// option does: an option is allowed only when it neither writes, runs a
// program, nor reads a file named by its value, and the files a command
// reads are its path operands, which are checked (after glob expansion,
// and through the whole tree for recursive commands) to stay inside the
// workspace without crossing a symbolic link.

// valueKind is what an option's value, or an operand, is.
type valueKind int

const (
	// textValue is not a file name: a number, a pattern, a format.
	textValue valueKind = iota + 1
	// pathValue is a file the command reads: it is checked like an operand.
	pathValue
)

// cmdSpec is the allowlist entry of one command.
type cmdSpec struct {
	// flags are the short options without a value ("la" for -l, -a, -la).
	flags string
	// shortValued are the short options that take a value (the rest of
	// the group, or the next word) and what it is.
	shortValued map[byte]valueKind
	// long are the long options (without "--"): valued ones take "=value"
	// or the next word; optional ones ("color=") only "=value".
	long map[string]longKind
	// numbers allows -NUM (head -5, grep -3).
	numbers bool
	// operands is what the operands are: path, text, or 0 for none.
	operands valueKind
	// pattern: the first operand is a pattern, unless a pattern option
	// (patternOpts) was given.
	pattern     bool
	patternOpts []string
	// recursive says whether the path operands are read as trees: always,
	// or when one of recursiveOpts is given.
	recursive     bool
	recursiveOpts []string
	// follows says the command follows symbolic links in the trees it
	// reads (diff does, unless --no-dereference); followOpts are the
	// options that make it do so (grep -R).
	follows    bool
	followOpts []string
	// dotDefault: without a path operand the command reads "." (as a tree
	// when recursive); otherwise it reads standard input or nothing.
	dotDefault bool
	// check, when set, checks what the generic parse cannot.
	check func(p *parsedArgs) error
}

// longKind is how a long option takes a value.
type longKind int

const (
	flag       longKind = iota // no value
	valued                     // "=value" or the next word, text
	optional                   // alone, or "=value" (never the next word), text
	valuedPath                 // "=value" or the next word, a file it reads
)

// parsedArgs is a command's arguments sorted by the allowlist.
type parsedArgs struct {
	opts     []string // the options given, short as "-x", long as "--name"
	operands []string
	values   []string // the values of its options that are text
	paths    []string // the files it reads: path operands and path values
	// pathspecs are words that name files only inside a repository (git's
	// operands): they must not spell a path outside the workspace.
	pathspecs []string
	// gitDir is the directory git -C (chained) starts in, relative to the
	// command's own, or "".
	gitDir string
	// worktree says git reads the files of its work tree and may print
	// them (git diff, git status -v): all of them are checked.
	worktree bool
	tree     bool // the paths are read as trees
	follow   bool // and links in those trees are followed
}

func (p *parsedArgs) has(names ...string) bool {
	return slices.ContainsFunc(p.opts, func(o string) bool { return slices.Contains(names, o) })
}

func longs(kind longKind, names string) map[string]longKind {
	m := map[string]longKind{}
	for _, n := range strings.Fields(names) {
		m[n] = kind
	}
	return m
}

func merge(ms ...map[string]longKind) map[string]longKind {
	out := map[string]longKind{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// allowlist is the allowlist of commands (git and find have their own
// parsers). It is built on first use: its hundreds of entries were a tenth
// of the time every start spent initialising packages.
var allowlist = sync.OnceValue(func() map[string]cmdSpec {
	// The options several commands share.
	grepLong := merge(
		longs(flag, `extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case
			invert-match word-regexp line-regexp count files-with-matches files-without-match only-matching
			quiet silent no-messages recursive dereference-recursive with-filename no-filename line-number
			byte-offset initial-tab null null-data text color colour`),
		longs(valued, `max-count after-context before-context context regexp include exclude exclude-dir label binary-files`),
		longs(optional, `color colour`),
	)
	lsLong := merge(
		longs(flag, `all almost-all classify directory human-readable si inode recursive reverse size
			group-directories-first full-time numeric-uid-gid no-group literal escape color author
			hide-control-chars show-control-chars quote-name file-type`),
		longs(valued, `sort time-style format ignore hide indicator-style quoting-style width tabsize time block-size`),
		longs(optional, `color classify hyperlink`),
	)
	grepSpec := cmdSpec{
		flags: "EFGPiyvwxcLlboqsrRhHnTZzaIU", numbers: true,
		shortValued: map[byte]valueKind{'e': textValue, 'm': textValue, 'A': textValue, 'B': textValue, 'C': textValue},
		long:        grepLong, operands: pathValue, pattern: true, patternOpts: []string{"-e", "--regexp"},
		recursiveOpts: []string{"-r", "-R", "--recursive", "--dereference-recursive"}, dotDefault: true,
		followOpts: []string{"-R", "--dereference-recursive"},
	}
	return map[string]cmdSpec{
		"ls": {flags: "aAbBcCdfFghiklmnNopqQrRsStuUvxX1Z", shortValued: map[byte]valueKind{'I': textValue, 'T': textValue, 'w': textValue},
			long: lsLong, operands: pathValue, dotDefault: true, recursiveOpts: []string{"-R", "--recursive"}},
		"cat": {flags: "AbeEnstTuv", operands: pathValue,
			long: longs(flag, "number number-nonblank show-all show-ends show-tabs squeeze-blank show-nonprinting")},
		"head": {flags: "qvz", numbers: true, shortValued: map[byte]valueKind{'n': textValue, 'c': textValue}, operands: pathValue,
			long: merge(longs(flag, "quiet silent verbose zero-terminated"), longs(valued, "lines bytes"))},
		// tail without -f/-F/--follow, --pid, --retry or -s: a following tail
		// waits for its whole time limit.
		"tail": {flags: "qvz", numbers: true, shortValued: map[byte]valueKind{'n': textValue, 'c': textValue}, operands: pathValue,
			long: merge(longs(flag, "quiet silent verbose zero-terminated"), longs(valued, "lines bytes"))},
		// wc without --files0-from.
		"wc": {flags: "clmwL", operands: pathValue,
			long: longs(flag, "bytes chars lines words max-line-length")},
		// grep without -f/--file, --exclude-from, -d/-D (which read devices).
		"grep":  grepSpec,
		"egrep": grepSpec,
		"fgrep": grepSpec,
		"rg": {flags: "iSsFwxvclonNHIUuaP.0qLb", // -L is refused in check
			shortValued: map[byte]valueKind{'e': textValue, 'g': textValue, 't': textValue, 'T': textValue, 'm': textValue, 'A': textValue, 'B': textValue, 'C': textValue, 'M': textValue, 'j': textValue, 'r': textValue, 'E': textValue},
			long: merge(
				longs(flag, `ignore-case smart-case case-sensitive fixed-strings word-regexp line-regexp invert-match count
					count-matches files-with-matches files-without-match only-matching line-number no-line-number with-filename
					no-filename no-ignore no-ignore-vcs no-ignore-parent no-ignore-dot hidden text files type-list json
					vimgrep heading no-heading column no-column stats trim null quiet multiline multiline-dotall
					byte-offset no-messages sort-files pcre2 unrestricted`),
				longs(valued, `regexp glob iglob type type-not max-count after-context before-context context max-columns
					threads replace sort sortr max-depth max-filesize color encoding engine colors type-add path-separator`),
			),
			operands: pathValue, pattern: true, patternOpts: []string{"-e", "--regexp", "--files", "--type-list"},
			recursive: true, dotDefault: true,
			check: func(p *parsedArgs) error {
				if p.has("-L") {
					return fmt.Errorf("-L follows symbolic links")
				}
				return nil
			}},
		// stat and file: any path operand, without following links.
		"stat": {flags: "ft", operands: pathValue,
			shortValued: map[byte]valueKind{'c': textValue},
			long:        merge(longs(flag, "file-system terse"), longs(valued, "format printf"))},
		"file": {flags: "bhiNnrsk", operands: pathValue, // not -p: it resets times of the files it reads
			long: merge(longs(flag, "brief mime mime-type mime-encoding no-dereference no-pad raw keep-going print0"), longs(valued, "separator"))},
		// du without --files0-from, -X/--exclude-from, -L/-H/-D.
		"du": {flags: "abchklmsSx0", shortValued: map[byte]valueKind{'d': textValue, 't': textValue, 'B': textValue},
			long: merge(longs(flag, "all apparent-size bytes total human-readable si summarize separate-dirs one-file-system null count-links inodes"),
				longs(valued, "max-depth threshold block-size exclude time-style"), longs(optional, "time")),
			operands: pathValue, recursive: true, dotDefault: true},
		"df": {flags: "ahHiklPT", operands: pathValue,
			long: merge(longs(flag, "all human-readable si inodes local portability print-type total"), longs(valued, "block-size output type exclude-type"), longs(optional, "output"))},
		"pwd":    {flags: "LP"},
		"echo":   {flags: "neE", operands: textValue},
		"which":  {flags: "a", operands: textValue},
		"uname":  {flags: "asnrvmpio", long: longs(flag, "all kernel-name nodename kernel-release kernel-version machine processor hardware-platform operating-system")},
		"whoami": {},
		"id":     {flags: "gGnruz", operands: textValue, long: longs(flag, "group groups name real user zero")},
		// date without -s/--set or -f/--file; its one operand is +FORMAT.
		"date": {flags: "uR", shortValued: map[byte]valueKind{'d': textValue, 'r': pathValue},
			long:     merge(longs(flag, "utc universal rfc-email debug"), longs(valued, "date rfc-3339"), longs(valuedPath, "reference"), longs(optional, "iso-8601")),
			operands: textValue,
			check: func(p *parsedArgs) error {
				for _, o := range p.operands {
					if !strings.HasPrefix(o, "+") {
						return fmt.Errorf("date's operand %q is not a +FORMAT (it would set the clock)", o)
					}
				}
				for _, v := range p.values {
					// TZ="/any/file" in a date string makes date open that
					// file as a time zone.
					if strings.Contains(strings.ToUpper(v), "TZ=") {
						return fmt.Errorf("date's date string %q names a time zone file (TZ=)", v)
					}
				}
				return nil
			}},
		// diff without --from-file/--to-file, -X/--exclude-from. Its operands
		// are walked as trees: given two directories it reads the files of the
		// same name in both, even without -r, and it follows links to files
		// and directories.
		"diff": {flags: "abBdEiNpqrstTuwy", numbers: true, shortValued: map[byte]valueKind{'U': textValue, 'C': textValue, 'x': textValue, 'I': textValue, 'W': textValue, 'S': textValue, 'F': textValue},
			long: merge(longs(flag, `brief recursive new-file unidirectional-new-file ignore-case ignore-tab-expansion ignore-trailing-space
				ignore-space-change ignore-all-space ignore-blank-lines text side-by-side report-identical-files strip-trailing-cr
				suppress-common-lines minimal speed-large-files expand-tabs initial-tab suppress-blank-empty left-column
				show-c-function normal no-dereference`),
				longs(valued, "unified context exclude label ignore-matching-lines width starting-file show-function-line tabsize horizon-lines color palette"),
				longs(optional, "unified context color")),
			operands: pathValue, recursive: true, follows: true},
		// sort without -o/--output, -T/--temporary-directory,
		// --compress-program, --files0-from, --random-source.
		"sort": {flags: "bdfgiMhnRrVcCmsuz", shortValued: map[byte]valueKind{'k': textValue, 't': textValue, 'S': textValue},
			long: merge(longs(flag, `ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort
				human-numeric-sort numeric-sort random-sort reverse version-sort merge stable unique zero-terminated debug`),
				longs(valued, "key field-separator buffer-size parallel batch-size sort"), longs(optional, "check")),
			operands: pathValue},
		// uniq: a second operand is the file it writes.
		"uniq": {flags: "cdDiuz", shortValued: map[byte]valueKind{'f': textValue, 's': textValue, 'w': textValue},
			long:     merge(longs(flag, "count repeated ignore-case unique zero-terminated"), longs(valued, "skip-fields skip-chars check-chars"), longs(optional, "all-repeated group")),
			operands: pathValue,
			check: func(p *parsedArgs) error {
				if len(p.operands) > 1 {
					return fmt.Errorf("uniq's second operand is a file it writes")
				}
				return nil
			}},
		// tree without -o, -l, -R or --fromfile.
		"tree": {flags: "adfFgiJpsuhDACnNqrtvxX", shortValued: map[byte]valueKind{'L': textValue, 'P': textValue, 'I': textValue},
			long:     merge(longs(flag, "noreport dirsfirst filesfirst prune matchdirs ignore-case du si inodes device"), longs(valued, "charset filelimit timefmt sort")),
			operands: pathValue, recursive: true, dotDefault: true},
		"basename": {flags: "asz", operands: textValue, shortValued: map[byte]valueKind{'s': textValue},
			long: merge(longs(flag, "multiple zero"), longs(valued, "suffix"))},
		"dirname": {flags: "z", operands: textValue, long: longs(flag, "zero")},
		"true":    {},
		"false":   {},
	}
})

// parseArgs sorts args (after glob expansion) by spec; its error says
// which argument is not allowed.
func parseArgs(name string, spec cmdSpec, args []string) (*parsedArgs, error) {
	p := &parsedArgs{}
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			n, v, hasValue := strings.Cut(a[2:], "=")
			kind, ok := spec.long[n]
			if !ok {
				return nil, fmt.Errorf("%s: option --%s is not on the allowlist", name, n)
			}
			p.opts = append(p.opts, "--"+n)
			switch {
			case kind == flag && hasValue:
				return nil, fmt.Errorf("%s: option --%s takes no value", name, n)
			case kind == valued || kind == valuedPath:
				if !hasValue {
					if i+1 >= len(args) {
						return nil, fmt.Errorf("%s: option --%s needs a value", name, n)
					}
					i++
					v = args[i]
				}
				if kind == valuedPath {
					p.paths = append(p.paths, v)
				} else {
					p.values = append(p.values, v)
				}
			case kind == optional && hasValue:
				p.values = append(p.values, v)
			}
		case len(a) > 1 && a[0] == '-':
			if spec.numbers && strings.Trim(a[1:], "0123456789") == "" {
				p.opts = append(p.opts, "-NUM")
				continue
			}
			for j := 1; j < len(a); j++ {
				c := a[j]
				if kind, ok := spec.shortValued[c]; ok {
					p.opts = append(p.opts, "-"+string(c))
					v := a[j+1:]
					if v == "" {
						if i+1 >= len(args) {
							return nil, fmt.Errorf("%s: option -%c needs a value", name, c)
						}
						i++
						v = args[i]
					}
					if kind == pathValue {
						p.paths = append(p.paths, v)
					} else {
						p.values = append(p.values, v)
					}
					break
				}
				if c >= 0x80 || !strings.ContainsRune(spec.flags, rune(c)) {
					return nil, fmt.Errorf("%s: option -%c is not on the allowlist", name, c)
				}
				p.opts = append(p.opts, "-"+string(c))
			}
		default:
			operands = append(operands, a)
		}
	}
	if spec.pattern && len(operands) > 0 && !p.has(spec.patternOpts...) {
		operands = operands[1:] // the pattern
	}
	if len(operands) > 0 && spec.operands == 0 {
		return nil, fmt.Errorf("%s takes no operands", name)
	}
	p.operands = operands
	if spec.operands == pathValue {
		p.paths = append(p.paths, operands...)
	}
	p.tree = spec.recursive || p.has(spec.recursiveOpts...)
	p.follow = spec.follows && !p.has("--no-dereference") || p.has(spec.followOpts...)
	if spec.dotDefault && spec.operands == pathValue && len(p.paths) == 0 && (p.tree || name == "ls") {
		p.paths = append(p.paths, ".")
	}
	if spec.check != nil {
		if err := spec.check(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// find's expression: the tests and actions that neither write, run a
// program nor follow links. findValued take one value (findPathValued a
// file it reads).
var (
	findFlags = strings.Fields(`-print -print0 -prune -empty -true -false -not ! ( ) -a -and -o -or , -depth
		-mount -xdev -nouser -nogroup -readable -writable -executable -quit -ls -noleaf -d`)
	findValued = strings.Fields(`-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -size
		-mtime -mmin -atime -amin -ctime -cmin -perm -user -group -uid -gid -links -inum -maxdepth -mindepth
		-regextype -printf -lname -ilname -used`)
	findPathValued = strings.Fields(`-newer -anewer -cnewer -samefile`)
)

// parseFind sorts find's arguments: -P, the starting points (default "."),
// then an expression of findFlags, findValued and findPathValued only.
func parseFind(args []string) (*parsedArgs, error) {
	p := &parsedArgs{tree: true}
	for len(args) > 0 && args[0] == "-P" {
		args = args[1:]
	}
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "(" && args[0] != "!" {
		p.paths = append(p.paths, args[0])
		args = args[1:]
	}
	if len(p.paths) == 0 {
		p.paths = []string{"."}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case slices.Contains(findFlags, a):
		case slices.Contains(findValued, a) || slices.Contains(findPathValued, a):
			if i+1 >= len(args) {
				return nil, fmt.Errorf("find: %s needs a value", a)
			}
			i++
			if slices.Contains(findPathValued, a) {
				p.paths = append(p.paths, args[i])
			}
		default:
			return nil, fmt.Errorf("find: %q is not on the allowlist (only tests and -print/-printf/-ls that neither write, run programs nor follow links)", a)
		}
	}
	return p, nil
}

// gitAllowed are git's read-only subcommands, each with its allowlist.
// Their operands are revisions and pathspecs: git reads them from the
// repository, and refuses paths outside its work tree.
var gitAllowed = sync.OnceValue(func() map[string]cmdSpec {
	// gitLogLong are the long options of log, show and diff: formatting and
	// limiting, without --output, --ext-diff, --textconv, --no-index or
	// anything that runs a program.
	gitLogLong := merge(
		longs(flag, `oneline graph stat shortstat numstat name-only name-status patch no-patch all branches tags remotes
			reverse merges no-merges first-parent follow decorate no-decorate abbrev-commit no-abbrev-commit
			cached staged raw summary full-index binary color no-color word-diff ignore-all-space ignore-space-change
			ignore-blank-lines minimal patience histogram check exit-code quiet date-order topo-order author-date-order
			left-right cherry-pick cherry-mark boundary relative-date show-notes no-notes no-renames find-renames
			no-ext-diff no-textconv full-diff pretty source parents children log-size all-match invert-grep
			regexp-ignore-case extended-regexp fixed-strings perl-regexp ignore-cr-at-eol remerge-diff`),
		longs(valued, `format max-count skip since after until before author committer grep date diff-filter
			unified relative abbrev word-diff-regex inter-hunk-context stat-width stat-count diff-algorithm
			min-parents max-parents encoding grep-reflog`),
		longs(optional, `pretty decorate color word-diff abbrev stat find-renames dirstat relative`),
	)
	return map[string]cmdSpec{
		"status": {flags: "sbuvz", long: merge(
			longs(flag, "short branch porcelain long verbose null ahead-behind no-ahead-behind renames no-renames show-stash"),
			longs(optional, "porcelain untracked-files ignored ignore-submodules column no-column find-renames")),
			operands: textValue},
		"log":       {flags: "pquz", numbers: true, shortValued: map[byte]valueKind{'n': textValue, 'S': textValue, 'G': textValue, 'L': textValue, 'U': textValue}, long: gitLogLong, operands: textValue},
		"show":      {flags: "pquzs", numbers: true, shortValued: map[byte]valueKind{'n': textValue, 'U': textValue}, long: gitLogLong, operands: textValue},
		"diff":      {flags: "pquzRw", numbers: true, shortValued: map[byte]valueKind{'U': textValue, 'M': textValue, 'C': textValue, 'S': textValue, 'G': textValue}, long: gitLogLong, operands: textValue},
		"rev-parse": {long: merge(longs(flag, "show-toplevel show-prefix show-cdup git-dir git-common-dir is-inside-work-tree is-inside-git-dir is-bare-repository verify quiet symbolic symbolic-full-name all branches tags remotes abbrev-ref absolute-git-dir show-superproject-working-tree"), longs(optional, "short abbrev-ref")), flags: "q", operands: textValue},
		"ls-files": {flags: "cdmoistvuz", long: merge(longs(flag, "cached deleted modified others ignored stage unmerged killed directory no-empty-directory full-name error-unmatch exclude-standard eol deduplicate recurse-submodules"),
			longs(valued, "exclude format abbrev")), shortValued: map[byte]valueKind{'x': textValue}, operands: textValue},
		"blame": {flags: "bclstfnpewM", shortValued: map[byte]valueKind{'L': textValue}, long: merge(longs(flag, "root show-stats porcelain line-porcelain incremental show-name show-number show-email"), longs(valued, "date abbrev")), operands: textValue},
		"branch": {flags: "avlr", long: merge(longs(flag, "all remotes verbose show-current list no-color ignore-case omit-empty no-abbrev no-column"),
			longs(valued, "contains no-contains merged no-merged points-at sort format"), longs(optional, "color column abbrev")),
			operands: textValue,
			check: func(p *parsedArgs) error {
				if len(p.operands) > 0 && !p.has("-l", "--list") {
					return fmt.Errorf("git branch with a name creates a branch (list with --list PATTERN)")
				}
				return nil
			}},
		"remote":   {flags: "v", long: longs(flag, "verbose")},
		"describe": {long: merge(longs(flag, "tags all long always contains exact-match first-parent"), longs(valued, "abbrev match exclude candidates"), longs(optional, "dirty broken")), operands: textValue},
	}
})

// parseGit sorts git's arguments: -C DIR (a directory it reads), --no-pager
// and --no-optional-locks before the subcommand, then one of gitAllowed.
func parseGit(args []string) (*parsedArgs, error) {
	dir := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "--no-pager" || args[0] == "-P" || args[0] == "--no-optional-locks":
			args = args[1:]
		case args[0] == "-C" && len(args) > 1:
			// Each -C is relative to the one before (an empty one is
			// ignored): git -C a -C b runs in a/b.
			switch d := args[1]; {
			case d == "":
			case dir == "" || filepath.IsAbs(d):
				dir = d
			default:
				dir += "/" + d
			}
			args = args[2:]
		default:
			return nil, fmt.Errorf("git: option %s before the subcommand is not on the allowlist", args[0])
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("git: no subcommand")
	}
	spec, ok := gitAllowed()[args[0]]
	if !ok {
		return nil, fmt.Errorf("git %s is not on the allowlist", args[0])
	}
	p, err := parseArgs("git "+args[0], spec, args[1:])
	if err != nil {
		return nil, err
	}
	if dir != "" {
		p.paths = append(p.paths, dir)
	}
	p.gitDir = dir
	p.worktree = args[0] == "diff" && !p.has("--cached", "--staged") || args[0] == "status" && p.has("-v", "--verbose")
	// Revisions and pathspecs that spell a path outside the work tree
	// (/etc/passwd, ../x) are refused although git would refuse them too;
	// those that name a file are checked as paths (see checker.call).
	p.pathspecs = p.operands
	return p, nil
}
