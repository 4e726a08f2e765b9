package schema

import (
	"strconv"
	"strings"
)

// Report lists what compiling a schema into a dialect changed.
type Report struct {
	// Dialect is the name of the dialect compiled to.
	Dialect string `json:"dialect"`
	// Changes lists every change, in the order the compiler made them.
	Changes []Change `json:"changes"`
	// NotStrict says why the schema cannot be made strict (OpenAI strict
	// mode only); empty when it can. A tool list with any such tool is
	// exported without strict mode.
	NotStrict []Change `json:"notStrict,omitempty"`
}

// Change is one thing the compiler changed, and why.
type Change struct {
	// Path locates the change inside the schema as dotted keywords:
	// "properties.url.format"; "" is the root.
	Path string `json:"path"`
	// Action says what was done: "moved to description", "inlined", …
	Action string `json:"action"`
	// Problem says what the provider would have rejected without the
	// change; empty when the change only helps a model read the schema.
	Problem string `json:"problem,omitempty"`
}

// String renders the change as "<path>: <action>", "(root)" for the root.
func (c Change) String() string { return displayPath(c.Path) + ": " + c.Action }

// Strict reports whether the schema could be made strict.
func (r Report) Strict() bool { return len(r.NotStrict) == 0 }

// Prefixed returns the report with every path below prefix, as in
// "tools.fetch.parameters".
func (r Report) Prefixed(prefix string) Report {
	out := Report{Dialect: r.Dialect, Changes: []Change{}}
	for _, c := range r.Changes {
		c.Path = joinPath(prefix, c.Path)
		out.Changes = append(out.Changes, c)
	}
	for _, c := range r.NotStrict {
		c.Path = joinPath(prefix, c.Path)
		out.NotStrict = append(out.NotStrict, c)
	}
	return out
}

// String renders the report one change per line.
func (r Report) String() string {
	var b strings.Builder
	for _, c := range r.Changes {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	for _, c := range r.NotStrict {
		b.WriteString(displayPath(c.Path))
		b.WriteString(": not strict: ")
		b.WriteString(c.Action)
		b.WriteByte('\n')
	}
	return b.String()
}

// Problem is one thing a provider would reject in a schema.
type Problem struct {
	// Path locates the problem as dotted keywords; "" is the root.
	Path string `json:"path"`
	// Message says what the provider rejects and, after "→", what
	// compiling does about it.
	Message string `json:"message"`
}

// String renders the problem as "<path>: <message>".
func (p Problem) String() string { return displayPath(p.Path) + ": " + p.Message }

// Problems returns what the provider would have rejected in the schema
// before compilation: every change made to avoid a rejection, and every
// reason the schema cannot be strict.
func (r Report) Problems() []Problem {
	var out []Problem
	for _, c := range r.Changes {
		if c.Problem != "" {
			out = append(out, Problem{Path: c.Path, Message: c.Problem + " → " + c.Action})
		}
	}
	for _, c := range r.NotStrict {
		out = append(out, Problem{Path: c.Path, Message: "strict mode: " + c.Action})
	}
	return out
}

// Lint returns what the dialect's provider would reject in doc, an
// uncompiled schema in the generic JSON form (see [Decode]), one problem per
// keyword or rule, in schema order; nil when it would accept doc as it is.
func (d Dialect) Lint(doc any) []Problem {
	_, rep := d.Compile(doc)
	return rep.Problems()
}

// joinPath appends a dotted path to a prefix.
func joinPath(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case strings.HasPrefix(path, "["):
		return prefix + path
	}
	return prefix + "." + path
}

// child appends one key to a dotted path: keys that are not identifiers are
// written as ["key"].
func child(path, key string) string {
	if !isIdent(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends an array index to a dotted path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func displayPath(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}
