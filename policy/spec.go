package policy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/hostmatch"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// A rule of tools.allow, tools.ask or tools.deny names a tool — an id, an
// alias, a group, a * glob — and may add a specifier in parentheses that
// limits it to some calls:
//
//   - exec(npm run test:*): a command. The specifier's words are matched
//     word by word against every program of the command line, as the
//     approval prompt lists them (each command of a list or pipeline,
//     subshells, substitutions, the programs env, nice or xargs run); a *
//     word matches any number of words, a * inside a word any characters,
//     and a trailing :* any further words (npm run test:* is npm run test,
//     npm run test -- --watch and npm run test:unit).
//   - read(./secrets/**): files, as gitignore patterns relative to the
//     workspace (a pattern without a slash, *.env, matches at any depth),
//     matched against the files the call touches with links resolved.
//   - web_fetch(domain:github.com): the hosts of the URLs a call names;
//     *.github.com matches the subdomains.
//   - message($.channel=slack): for any tool, an argument named by a JSON
//     path matches a * pattern (case ignored), as an ask rule's when does.
//
// A rule that takes something away (deny, ask) holds whenever a call may
// match it: any program of a compound command, any file, any URL, and
// every call whose programs or files cannot all be known. A rule that
// gives (allow) holds only when every program, file and URL of the call
// matches it, each known exactly: a command that sets variables before a
// program, redirects, or passes an expansion is never allowed by one.

// specKind is what a specifier is about.
type specKind uint8

const (
	wholeTool specKind = iota
	specCommand
	specPath
	specDomain
	specWhen
)

// rule is a parsed tool reference.
type rule struct {
	name string
	kind specKind
	// words are a command specifier's words; rest says it ends with :*.
	words []string
	rest  bool
	// pattern is a path pattern (relative to the workspace, anchored or
	// not), a domain pattern, or a condition's pattern; key a condition's
	// JSON path.
	pattern  string
	anchored bool
	key      string
}

// ParseRule parses a tool reference with an optional specifier
// ("exec(npm run test:*)"), and says what is wrong with a specifier that
// cannot be used.
func ParseRule(ref string) error {
	_, err := parseRule(ref)
	return err
}

// RuleName returns the tool name of a reference, without its specifier.
func RuleName(ref string) string {
	name, _, _ := splitRule(ref)
	return name
}

// splitRule splits "name(spec)"; ok is false for a reference without a
// specifier.
func splitRule(ref string) (name, spec string, ok bool) {
	ref = strings.TrimSpace(ref)
	i := strings.IndexByte(ref, '(')
	if i < 0 || !strings.HasSuffix(ref, ")") {
		return ref, "", false
	}
	return strings.TrimSpace(ref[:i]), strings.TrimSpace(ref[i+1 : len(ref)-1]), true
}

// parseRule parses a reference (see the comment above).
func parseRule(ref string) (rule, error) {
	name, spec, ok := splitRule(ref)
	r := rule{name: name}
	if !ok {
		if strings.ContainsAny(ref, "()") {
			return r, fmt.Errorf("%q has unbalanced parentheses: write tool(specifier), e.g. exec(npm run test:*)", ref)
		}
		return r, nil
	}
	switch {
	case name == "":
		return r, fmt.Errorf("%q names no tool before its specifier", ref)
	case spec == "":
		return r, fmt.Errorf("%q has an empty specifier: leave out the parentheses to name the whole tool", ref)
	}
	if d, ok := strings.CutPrefix(spec, "domain:"); ok {
		r.kind, r.pattern = specDomain, strings.TrimSpace(d)
		if err := hostmatch.CheckPattern(r.pattern); err != nil {
			return r, fmt.Errorf("%q: %v", ref, err)
		}
		return r, nil
	}
	if strings.HasPrefix(spec, "$") {
		key, pattern, ok := strings.Cut(spec, "=")
		r.kind, r.key, r.pattern = specWhen, strings.TrimSpace(key), strings.TrimSpace(pattern)
		if _, err := jsonPath(r.key); err != nil || !ok || r.pattern == "" {
			return r, fmt.Errorf("%q: a condition is $.argument=pattern, e.g. $.channel=slack or $.options.force=true", ref)
		}
		return r, nil
	}
	if id, _ := catalog.Alias(name); name == "exec" || id == "exec" {
		r.kind = specCommand
		spec, r.rest = strings.CutSuffix(spec, ":*")
		r.words = strings.Fields(spec)
		if len(r.words) == 0 {
			return r, fmt.Errorf("%q: a command specifier starts with a program, e.g. exec(npm run test:*)", ref)
		}
		return r, nil
	}
	r.kind = specPath
	p := strings.TrimPrefix(spec, "./")
	r.anchored = strings.Contains(strings.TrimSuffix(p, "/"), "/")
	r.pattern = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/") // a directory, and what is in it (gitMatch)
	if r.pattern == "" || slices.Contains(strings.Split(r.pattern, "/"), "..") {
		return r, fmt.Errorf("%q: a path pattern lies inside the workspace and has no .. (./secrets/**, **/*.env)", ref)
	}
	return r, nil
}

// specificity ranks references for "most specific first": a specifier,
// then a tool's own name, then a group or glob.
func (r rule) specificity() int {
	switch {
	case r.kind != wholeTool:
		return 2
	case strings.HasPrefix(r.name, registry.GroupPrefix) || strings.Contains(r.name, "*"):
		return 0
	}
	return 1
}

// holding is whether a rule holds for a request.
type holding uint8

const (
	fails holding = iota
	holds
	// unknown: the rule names the tool, but whether it holds depends on
	// arguments the request does not have.
	unknown
)

// rule returns the parsed reference (a reference that does not parse,
// which config refuses, names nothing).
func (p *Policy) rule(ref string) (rule, bool) {
	if r, ok := p.rules.Load(ref); ok {
		return r.(rule), true
	}
	r, err := parseRule(ref)
	if err != nil {
		return r, false
	}
	p.rules.Store(ref, r)
	return r, true
}

// holds decides a reference for req; strict is for a rule that gives
// (allow), which must hold for every part of the call.
func (p *Policy) holds(req Request, ref string, strict bool) holding {
	r, ok := p.rule(ref)
	if !ok || !p.Matches(&req.Meta, r.name) {
		return fails
	}
	if r.kind == wholeTool {
		return holds
	}
	if req.Args == nil {
		return unknown
	}
	var ok2 bool
	switch r.kind {
	case specCommand:
		ok2 = r.commandHolds(req, strict)
	case specPath:
		ok2 = p.pathHolds(r, req, strict)
	case specDomain:
		ok2 = r.domainHolds(req, strict)
	case specWhen:
		_, ok2 = p.conditionsMatch(map[string][]string{r.key: {r.pattern}}, req)
	}
	if ok2 {
		return holds
	}
	return fails
}

// commandHolds matches the programs of the call's command.
func (r rule) commandHolds(req Request, strict bool) bool {
	if strict {
		return req.ProgramsListed && len(req.Programs) > 0 && !slices.ContainsFunc(req.Programs, func(prog tool.Program) bool {
			return !prog.Exact || !r.commandMatches(prog.Name, prog)
		})
	}
	return !req.ProgramsListed || slices.ContainsFunc(req.Programs, func(prog tool.Program) bool {
		name := prog.Name
		if !strings.Contains(r.words[0], "/") {
			name = path.Base(name) // /usr/bin/curl and ./curl are curl
		}
		return r.commandMatches(name, prog)
	})
}

// commandMatches matches one program, named name: exactly when its
// arguments are all known, else when the words known so far could begin a
// match.
func (r rule) commandMatches(name string, prog tool.Program) bool {
	words := append([]string{name}, prog.Args...)
	pattern := r.words
	if r.rest {
		pattern = append(slices.Clone(r.words), "*")
		if matchWords(pattern, words, !prog.Exact) {
			return true
		}
		pattern = slices.Clone(r.words)
		pattern[len(pattern)-1] += ":*"
	}
	return matchWords(pattern, words, !prog.Exact)
}

// matchWords matches words against pattern words: a "*" word matches any
// number of words, * and ? inside a word any characters and one. open
// says more words may follow that are not known: a match of the known
// ones as far as they go counts.
func matchWords(pattern, words []string, open bool) bool {
	switch {
	case len(words) == 0 && open:
		return true
	case len(pattern) == 0:
		return len(words) == 0
	case pattern[0] == "*":
		for i := 0; i <= len(words); i++ {
			if matchWords(pattern[1:], words[i:], open) {
				return true
			}
		}
		return false
	case len(words) == 0:
		return false
	}
	return wordGlob(pattern[0]).MatchString(words[0]) && matchWords(pattern[1:], words[1:], open)
}

// wordGlob compiles a word pattern: * any characters, ? one.
func wordGlob(pattern string) *regexp.Regexp {
	q := regexp.QuoteMeta(pattern)
	q = strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(q)
	return regexp.MustCompile("^" + q + "$")
}

// pathHolds matches the files the call touches: every one (strict, case
// kept) or any one (case ignored, and whenever the files it would change
// are not known).
func (p *Policy) pathHolds(r rule, req Request, strict bool) bool {
	pattern := r.pattern
	if !r.anchored {
		pattern = "**/" + pattern
	}
	if strict {
		re := p.glob(pattern, false)
		return req.FilesListed && len(req.Files) > 0 && !slices.ContainsFunc(req.Files, func(f string) bool { return !gitMatch(re, f) })
	}
	re := p.glob(pattern, true)
	return !req.FilesListed || slices.ContainsFunc(touched(req), func(f string) bool { return gitMatch(re, f) })
}

// gitMatch matches a workspace path as gitignore does: the path, or a
// directory it lies in.
func gitMatch(re *regexp.Regexp, f string) bool {
	for f = path.Clean(f); ; {
		if re.MatchString(f) {
			return true
		}
		d := path.Dir(f)
		if d == f || d == "." || d == "/" {
			return false
		}
		f = d
	}
}

// domainHolds matches the hosts of the URLs the call names.
func (r rule) domainHolds(req Request, strict bool) bool {
	urls := argURLs(req.Args)
	if strict && len(urls) == 0 {
		return false
	}
	for _, s := range urls {
		u, err := url.Parse(s)
		ok := err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && hostmatch.Match(r.pattern, u.Hostname())
		if strict && !ok {
			return false
		}
		if !strict && (ok || err != nil || u.Hostname() == "") {
			return true
		}
	}
	return strict
}

// argURLs returns the strings a call gives under a key that names a URL
// (url, targetUrl, …).
func argURLs(args map[string]any) []string {
	var out []string
	for k, v := range args {
		if s, ok := v.(string); ok && strings.HasSuffix(strings.ToLower(k), "url") {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// jsonPath splits a JSON path ($.a.b[0]) into its steps: names and
// indexes.
func jsonPath(key string) ([]string, error) {
	rest, ok := strings.CutPrefix(key, "$")
	if !ok || rest == "" {
		return nil, fmt.Errorf("%q is not a JSON path ($.name)", key)
	}
	var steps []string
	for rest != "" {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[") + 1
			if end == 0 {
				end = len(rest)
			}
			if end == 1 {
				return nil, fmt.Errorf("%q has an empty name", key)
			}
			steps, rest = append(steps, rest[1:end]), rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q has an unclosed [", key)
			}
			if _, err := strconv.Atoi(rest[1:end]); err != nil {
				return nil, fmt.Errorf("%q: an index is a number", key)
			}
			steps, rest = append(steps, rest[1:end]), rest[end+1:]
		default:
			return nil, fmt.Errorf("%q: write .name or [index]", key)
		}
	}
	return steps, nil
}

// argValue returns the argument a condition's key names — an argument's
// name, or a JSON path into the arguments — as text: a string as it is,
// a number or boolean as JSON writes it.
func argValue(args map[string]any, key string) (string, bool) {
	var v any = args[key]
	if strings.HasPrefix(key, "$") {
		steps, err := jsonPath(key)
		if err != nil {
			return "", false
		}
		v = any(args)
		for _, s := range steps {
			switch c := v.(type) {
			case map[string]any:
				v = c[s]
			case []any:
				i, _ := strconv.Atoi(s)
				if i < 0 || i >= len(c) {
					return "", false
				}
				v = c[i]
			default:
				return "", false
			}
		}
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool, float64, json.Number:
		b, _ := json.Marshal(v)
		return string(b), true
	}
	return "", false
}
