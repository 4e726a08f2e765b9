package fs

import (
	"context"
	"io"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolbelt/toolbelt/fsbridge"
)

// walk calls fn for every entry below start (not start itself) in lexical
// order. It never enters .git or follows symbolic links; with an ignorer it
// leaves out what .gitignore files exclude. fn may return iofs.SkipDir or
// iofs.SkipAll. Directories that cannot be read are passed over.
func walk(ctx context.Context, b fsbridge.Bridge, start string, ig *ignorer, fn func(p string, d iofs.DirEntry) error) error {
	root := ""
	return b.WalkDir(ctx, start, func(p string, d iofs.DirEntry, err error) error {
		if root == "" {
			root = p
			return err // the start itself: its error ends the walk
		}
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return iofs.SkipDir
		}
		if ig != nil && ig.ignored(ctx, p, d) {
			if d.IsDir() {
				return iofs.SkipDir
			}
			return nil
		}
		return fn(p, d)
	})
}

// place names a canonical path in a message: "." is the workspace.
func place(p string) string {
	if p == "." {
		return "the workspace"
	}
	return p
}

// relTo returns p relative to dir (both canonical).
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

// globMatcher matches paths against a glob as find and grep take it: a glob
// without "/" matches an entry's name at any depth; one with "/" matches its
// path relative to the directory searched.
type globMatcher struct {
	pattern string
	byName  bool
}

// newGlob checks a glob and returns its matcher.
func newGlob(pattern string) (globMatcher, bool) {
	pattern = strings.TrimPrefix(pattern, "./")
	byName := !strings.Contains(pattern, "/")
	pattern = strings.TrimPrefix(pattern, "/")
	return globMatcher{pattern, byName}, doublestar.ValidatePattern(pattern)
}

// match reports whether the entry at rel (relative to the directory
// searched) matches.
func (g globMatcher) match(rel string) bool {
	if g.byName {
		return doublestar.MatchUnvalidated(g.pattern, path.Base(rel))
	}
	return doublestar.MatchUnvalidated(g.pattern, rel)
}

// ignorer applies the rules of .gitignore files (and .git/info/exclude at
// the root), reading each directory's file the first time a path below it
// is checked.
type ignorer struct {
	b     fsbridge.Bridge
	rules map[string][]ignoreRule // by directory
	// dir is the directory of the last entry checked, and chain the rules
	// that apply in it, the root's first.
	dir     string
	entered bool
	chain   []ignoreLevel
}

// ignoreLevel is the rules of one .gitignore that apply below a directory:
// off is where, in the path of an entry below it, the path relative to it
// starts.
type ignoreLevel struct {
	off   int
	rules []ignoreRule
}

// ignoreRule is one line of a .gitignore, as a doublestar pattern relative
// to the directory of its file.
type ignoreRule struct {
	pattern string
	negate  bool
	dirOnly bool
}

func newIgnorer(b fsbridge.Bridge) *ignorer {
	return &ignorer{b: b, rules: map[string][]ignoreRule{}}
}

// ignored reports whether the entry d at the canonical path p of a walk is
// excluded: the last rule that matches it, from the root's .gitignore down
// to its parent's, decides.
func (ig *ignorer) ignored(ctx context.Context, p string, d iofs.DirEntry) bool {
	if dir := path.Dir(p); !ig.entered || dir != ig.dir {
		ig.enter(ctx, dir, d)
	}
	isDir := d.IsDir()
	ignored := false
	for _, lv := range ig.chain {
		rel := p[lv.off:]
		for _, r := range lv.rules {
			if r.dirOnly && !isDir {
				continue
			}
			if doublestar.MatchUnvalidated(r.pattern, rel) {
				ignored = !r.negate
			}
		}
	}
	return ignored
}

// enter gathers the rules that apply to the entries of dir, d being one of
// them. The .gitignore of dir, the first time it is needed, is looked for
// in the walk's listing of dir and opened through d (see fsbridge.Opener),
// not looked up by path.
func (ig *ignorer) enter(ctx context.Context, dir string, d iofs.DirEntry) {
	if dir != "." {
		if _, done := ig.rules[dir]; !done {
			if o, ok := d.(fsbridge.Opener); ok {
				var rules []ignoreRule
				if f, err := o.OpenSibling(".gitignore"); err == nil {
					rules = readIgnore(f)
				}
				ig.rules[dir] = rules // "." also has .git/info/exclude: loaded by path
			}
		}
	}
	ig.dir, ig.entered, ig.chain = dir, true, ig.chain[:0]
	add := func(at string, off int) {
		if rules := ig.load(ctx, at); len(rules) > 0 {
			ig.chain = append(ig.chain, ignoreLevel{off, rules})
		}
	}
	add(".", 0)
	if dir == "." {
		return
	}
	for i := 0; i < len(dir); i++ {
		if dir[i] == '/' {
			add(dir[:i], i+1)
		}
	}
	add(dir, len(dir)+1)
}

// maxIgnoreFile bounds the .gitignore files read.
const maxIgnoreFile = 1 << 20

// load returns the rules of dir's .gitignore, reading it by path.
func (ig *ignorer) load(ctx context.Context, dir string) []ignoreRule {
	if rules, ok := ig.rules[dir]; ok {
		return rules
	}
	var rules []ignoreRule
	if dir == "." {
		if f, err := ig.b.Open(ctx, ".git/info/exclude"); err == nil {
			rules = readIgnore(f)
		}
	}
	if f, err := ig.b.Open(ctx, path.Join(dir, ".gitignore")); err == nil {
		rules = append(rules, readIgnore(f)...)
	}
	ig.rules[dir] = rules
	return rules
}

// readIgnore reads and closes a .gitignore file; one that cannot be read
// has no rules.
func readIgnore(f iofs.File) []ignoreRule {
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return parseIgnore(string(b))
}

// parseIgnore parses the lines of a .gitignore file. Lines that are not
// valid patterns are dropped, as git does.
func parseIgnore(text string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		// Trailing spaces are dropped unless escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		// Braces are literal in .gitignore, alternatives in doublestar.
		line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
		if !anchored {
			line = "**/" + line
		}
		if !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}
