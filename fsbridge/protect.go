package fsbridge

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// DefaultProtected returns the protected-path list bridges use unless told
// otherwise (see [Protect]): all git metadata, which can make git run
// programs or read other repositories; Toolbelt's own configuration and
// data; and the project files of agent clients and editors that start
// programs or that agents load as instructions:
//
//	.git/           every .git entry at any depth, file or directory, and
//	                all below it (config, hooks, commondir, worktrees, …)
//	commondir       files that redirect git to another repository,
//	gitdir          wherever they are
//	HEAD            the file every repository has, so no bare repository
//	                (HEAD, objects/, refs/, config) can be put together
//	*.git/          directories named like bare repositories (x.git)
//	.gitmodules     submodule definitions (URLs and paths git follows)
//	.toolbelt/      Toolbelt's per-workspace directory
//	toolbelt.yaml   Toolbelt's configuration file
//
// then what agent clients and editors read from a project to start
// programs (MCP servers, hooks, tasks, interpreters, commands run on open):
// .mcp.json, .claude/, .codex/, .cursor/, .vscode/, .gemini/,
// .continue/, .windsurf/, .roo/, .kiro/, .zed/, .idea/, .junie/,
// .amazonq/, .opencode/, opencode.json, opencode.jsonc, .aider.conf.yml,
// .devcontainer/, .devcontainer.json and .envrc; and the instructions
// agents load on their own: AGENTS.md, AGENTS.override.md, CLAUDE.md,
// CLAUDE.local.md, GEMINI.md, .cursorrules, .windsurfrules, .clinerules,
// .roorules, .roomodes, .goosehints, .rules,
// .github/copilot-instructions.md and .github/instructions/. Each is
// protected at any depth (clients look for them in the folder they open
// and, for instructions, in its subfolders), as a directory when the
// client also accepts a directory of that name.
//
// Plus Toolbelt's configuration and data directories for this user (under
// the user's config directory and $XDG_DATA_HOME, or ~/.local/share), which
// matter when the workspace contains them.
func DefaultProtected() []string {
	list := []string{
		// git
		".git/", "commondir", "gitdir", "HEAD", "*.git/", ".gitmodules",
		// Toolbelt
		".toolbelt/", "toolbelt.yaml",
		// agent clients and editors: what starts programs
		".mcp.json", ".claude/", ".codex/", ".cursor/", ".vscode/", ".gemini/",
		".continue/", ".windsurf/", ".roo/", ".kiro/", ".zed/", ".idea/", ".junie/",
		".amazonq/", ".opencode/", "opencode.json", "opencode.jsonc", ".aider.conf.yml",
		".devcontainer/", ".devcontainer.json", ".envrc",
		// instructions agents load on their own
		"AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md",
		".cursorrules", ".windsurfrules", ".clinerules/", ".roorules", ".roomodes",
		".goosehints", ".rules", ".github/copilot-instructions.md", ".github/instructions/",
	}
	if dir, err := os.UserConfigDir(); err == nil {
		list = append(list, filepath.Join(dir, "toolbelt"))
	}
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		list = append(list, filepath.Join(dir, "toolbelt"))
	} else if home, err := os.UserHomeDir(); err == nil {
		list = append(list, filepath.Join(home, ".local", "share", "toolbelt"))
	}
	return list
}

// Option configures a bridge.
type Option func(*options)

type options struct {
	protected      []string
	concealed      []string
	allowHardLinks bool
}

func newOptions(opts []Option) options {
	o := options{protected: DefaultProtected()}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Protect replaces the protected-path list (default [DefaultProtected]);
// Protect() with no patterns protects nothing. Write operations (write,
// mkdir, remove, rename) refuse a protected path whether or not it exists,
// however it is spelled: through symbolic links, "..", letter case, or
// characters that some file systems ignore.
//
// A pattern is a slash-separated path; each element may use [path.Match]
// wildcards. A pattern ending in "/" protects that directory and everything
// below it; any other protects exactly that path. A pattern starting with "/"
// is anchored at the root; any other matches at any depth (".git/config"
// also protects "vendor/x/.git/config"). An absolute path of the operating
// system (such as a data directory) protects that location and everything
// below it when it lies inside a [Local] root, and is ignored otherwise.
func Protect(patterns ...string) Option {
	return func(o *options) { o.protected = append([]string(nil), patterns...) }
}

// Conceal hides directories of the operating system (absolute paths, such
// as Toolbelt's data directory) that lie inside a [Local] root: reads,
// listings, walks and writes treat them as if they were outside the root.
// Listings and walks leave them out; reading, writing or stating them (by
// any spelling, or through a symbolic link) is refused. Paths outside the
// root, and every path for [Memory], are ignored.
func Conceal(dirs ...string) Option {
	return func(o *options) { o.concealed = append(o.concealed, dirs...) }
}

// AllowHardLinks lets [Local] read and write a regular file that has more
// than one hard link. By default both are refused (errors matching
// [ErrHardLinked]), because the other link may be a file outside the root:
// reading would show its content. (A write replaces the file, so the other
// link keeps its old content either way.) It is the one setting for hard
// links of every tool that reads through the bridge: read, grep, edit,
// apply_patch, memory_get and memory_search.
func AllowHardLinks() Option { return func(o *options) { o.allowHardLinks = true } }

// rule is one compiled protected-path pattern.
type rule struct {
	pattern  string
	elems    []string // folded
	literal  string   // the path as written, relative to the root, when it has no wildcard
	anchored bool
	dir      bool
}

// protector matches canonical paths against the protected-path list.
type protector struct {
	rules []rule
}

// newProtector compiles patterns. roots are the absolute forms of the root
// (as given and with symbolic links resolved), used for absolute patterns;
// none means absolute patterns are ignored.
func newProtector(patterns []string, roots ...string) (protector, error) {
	var p protector
	for _, pat := range patterns {
		r := rule{pattern: pat}
		body := pat
		if filepath.IsAbs(pat) {
			rel, ok := insideAny(filepath.Clean(pat), roots)
			if !ok {
				continue
			}
			r.anchored, r.dir = true, true
			if rel == "." { // the whole root is protected
				p.rules = append(p.rules, r)
				continue
			}
			body = rel
		} else {
			body = filepath.ToSlash(body)
			r.anchored = strings.HasPrefix(body, "/")
			r.dir = strings.HasSuffix(body, "/")
		}
		elems := splitPath(body)
		for _, e := range elems {
			if e == "." || e == ".." {
				return protector{}, fmt.Errorf("protected path %q: use a plain path without \".\" or \"..\"", pat)
			}
			if _, err := path.Match(e, ""); err != nil {
				return protector{}, fmt.Errorf("protected path %q: %w", pat, err)
			}
			r.elems = append(r.elems, fold(e))
		}
		if len(r.elems) == 0 {
			return protector{}, fmt.Errorf("protected path %q names no file: give a path such as \".git/config\"", pat)
		}
		if !strings.ContainsAny(body, `*?[\`) {
			r.literal = joinPath(elems)
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// insideAny returns abs relative to the first of roots that contains it.
func insideAny(abs string, roots []string) (string, bool) {
	for _, root := range roots {
		if root == "" {
			continue
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		return filepath.ToSlash(rel), true
	}
	return "", false
}

// match returns the pattern that protects the canonical path p.
func (pr *protector) match(p string) (string, bool) {
	if len(pr.rules) == 0 {
		return "", false
	}
	elems := splitPath(p)
	if p == "." {
		elems = nil
	}
	for i, e := range elems {
		elems[i] = fold(e)
	}
	for _, r := range pr.rules {
		last := len(elems) - len(r.elems)
		if r.anchored && last > 0 {
			last = 0
		}
		for i := 0; i <= last; i++ {
			if r.matchAt(elems, i) {
				return r.pattern, true
			}
		}
	}
	return "", false
}

// Protection is a bridge's protected-path list compiled for its root, for
// tools that reach the root's files by other ways than the bridge — a
// sandbox that must keep the same paths read-only.
type Protection struct{ pr protector }

// Match reports whether rel, a slash-separated path relative to the root
// with its symbolic links resolved, is protected: it matches the list, or
// lies in a directory that does.
func (p Protection) Match(rel string) bool {
	_, ok := p.pr.match(path.Clean(rel))
	return ok
}

// Names returns the paths, relative to the root, that the list names
// without wildcards, as written — for a pattern that matches at any depth,
// its place at the root (".git", "toolbelt.yaml",
// ".github/copilot-instructions.md") — in the list's order, each once.
// These are the protected paths one can think of creating: a tool that
// cannot refuse to create them must make that impossible otherwise.
func (p Protection) Names() []string {
	var names []string
	for _, r := range p.pr.rules {
		if r.literal != "" && !slices.Contains(names, r.literal) {
			names = append(names, r.literal)
		}
	}
	return names
}

func (r *rule) matchAt(elems []string, i int) bool {
	if !r.dir && i+len(r.elems) != len(elems) {
		return false
	}
	for j, pat := range r.elems {
		if ok, _ := path.Match(pat, elems[i+j]); !ok {
			return false
		}
	}
	return true
}

// check refuses op on p (as given) when any of the canonical paths is
// protected.
func (pr *protector) check(op, given string, canonical ...string) error {
	for _, c := range canonical {
		if pat, ok := pr.match(c); ok {
			return refuse(op, given, "%q is a protected path (it matches %q on the protected-path list). Write tools never create, change, move or delete protected paths, which hold git internals or agent and Toolbelt configuration that can make programs run. Leave it unchanged, or ask the user to change it", c, pat)
		}
	}
	return nil
}

// fold maps a path element to the form protection compares: lower case,
// without the characters some file systems ignore in names (zero-width and
// direction marks, as HFS+ does; trailing dots and spaces, as Windows does).
func fold(e string) string {
	e = strings.Map(func(r rune) rune {
		if ignorable(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, e)
	return strings.TrimRight(e, ". ")
}

// ignorable reports the code points HFS+ ignores in file names (the list git
// checks for in is_hfs_dotgit), plus the byte-order mark.
func ignorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
