package policy

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/hostmatch"
)

// Propose words the allow rule a person could save when approving req, so
// that calls like it run unasked in the workspace:
//
//   - a command: its program and the words after it up to the first that
//     looks variable (a flag, a path, a value), as a prefix —
//     npm run test -- --watch gives exec(npm run test:*). Every program
//     of the command must give the same prefix, each known exactly.
//   - file tools: the directory of the files the call touches —
//     edit(src/app/**), or the file itself at the workspace's top
//     (edit(/README.md)).
//   - URLs: their host — web_fetch(domain:github.com).
//
// It returns "" when no such rule fits, and never a rule that would not
// allow req itself. req needs its Args, and its Programs and Files as
// listed for the call (whatever rules the policy has).
func (p *Policy) Propose(req Request) string {
	p = p.current()
	if req.Args == nil {
		return ""
	}
	name := req.Meta.ID
	var spec string
	if id, _ := catalog.Alias(name); name == "exec" || id == "exec" {
		spec = commandPrefix(req)
	} else if urls := argURLs(req.Args); len(urls) > 0 {
		spec = domainOf(urls)
	} else if req.FilesListed {
		spec = directoryOf(req.Files)
	}
	if spec == "" {
		return ""
	}
	rule := name + "(" + spec + ")"
	if p.holds(req, rule, true) != holds {
		return ""
	}
	return rule
}

// fixedWord is a word that names a command or subcommand (run, test,
// test:unit), not a value the next call may change.
var fixedWord = regexp.MustCompile(`^[a-z][a-z0-9_-]*(:[a-z0-9_-]+)*$`)

// maxPrefixWords caps a proposed command prefix: a program and two
// subcommands (docker compose up, npm run test).
const maxPrefixWords = 3

// commandPrefix is the specifier of the prefix every program of the
// command shares, "" when they do not share one.
func commandPrefix(req Request) string {
	if !req.ProgramsListed || len(req.Programs) == 0 {
		return ""
	}
	var prefix string
	for _, prog := range req.Programs {
		words := []string{prog.Name}
		for _, a := range prog.Args {
			if len(words) == maxPrefixWords || !fixedWord.MatchString(a) {
				break
			}
			words = append(words, a)
		}
		s := strings.Join(words, " ") + ":*"
		if !prog.Exact || prefix != "" && s != prefix || strings.ContainsAny(prog.Name, "()*? \t") {
			return ""
		}
		prefix = s
	}
	return prefix
}

// domainOf is the domain: specifier of the one host the URLs name, ""
// when they name several or none.
func domainOf(urls []string) string {
	var host string
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" || host != "" && !hostmatch.Match(host, u.Hostname()) {
			return ""
		}
		host = strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	}
	if hostmatch.CheckPattern(host) != nil {
		return ""
	}
	return "domain:" + host
}

// directoryOf is the path specifier of the directory the files share
// (dir/**), or of the one file at the top of the workspace (/name); ""
// for files at the top and in directories, or outside the workspace.
func directoryOf(files []string) string {
	if len(files) == 0 || slices.ContainsFunc(files, func(f string) bool {
		return path.IsAbs(f) || f == ".." || strings.HasPrefix(f, "../") || strings.ContainsAny(f, "*?[()")
	}) {
		return ""
	}
	dir := path.Dir(files[0])
	for _, f := range files[1:] {
		for dir != "." && !strings.HasPrefix(f, dir+"/") {
			dir = path.Dir(dir)
		}
	}
	switch {
	case dir != ".":
		return dir + "/**"
	case len(files) == 1:
		return "/" + files[0]
	}
	return ""
}
