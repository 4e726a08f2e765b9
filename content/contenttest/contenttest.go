// Package contenttest reads wrapped text back, for tests: which parts of a
// text a model gets are wrapped as untrusted content (package content), from
// which source, and what is left outside the wrappers.
package contenttest

import (
	"fmt"
	"regexp"
	"strings"
)

// Segment is one wrapped part of a text.
type Segment struct {
	// Source is what its source line names ("" when it has none).
	Source string
	// Body is the wrapped text.
	Body string
}

var (
	start = regexp.MustCompile(`<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]{16})">>>\n`)
	stray = regexp.MustCompile(`(?i)EXTERNAL_UNTRUSTED_CONTENT`)
)

// Split returns the wrapped segments of text, in order, and the text
// outside them (the parts between, joined by newlines). A start marker
// without its end marker (the same id), or a marker outside a wrapper, is
// an error.
func Split(text string) (segs []Segment, outside string, err error) {
	var out []string
	for {
		loc := start.FindStringSubmatchIndex(text)
		if loc == nil {
			break
		}
		out = append(out, text[:loc[0]])
		id := text[loc[2]:loc[3]]
		rest := text[loc[1]:]
		end := "\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"" + id + "\">>>"
		i := strings.Index(rest, end)
		if i < 0 {
			return nil, "", fmt.Errorf("the wrapper %s is not closed:\n%s", id, rest)
		}
		var seg Segment
		body := rest[:i]
		if src, after, ok := strings.Cut(body, "\n---\n"); ok && strings.HasPrefix(src, "Source: ") && !strings.Contains(src, "\n") {
			seg.Source, body = strings.TrimPrefix(src, "Source: "), after
		}
		seg.Body = body
		segs = append(segs, seg)
		text = rest[i+len(end):]
	}
	out = append(out, text)
	outside = strings.Join(out, "\n")
	if m := stray.FindStringIndex(outside); m != nil {
		return nil, "", fmt.Errorf("a marker outside any wrapper, at %q", outside[max(0, m[0]-40):min(len(outside), m[1]+40)])
	}
	return segs, outside, nil
}

// Check reports how text fails to carry text from outside as it must: it
// has no wrapper, a wrapper whose source line does not name source, or
// mark — a string only the outside text has — outside the wrappers.
func Check(text, source, mark string) error {
	segs, outside, err := Split(text)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return fmt.Errorf("nothing is wrapped:\n%s", text)
	}
	for _, s := range segs {
		if !strings.Contains(s.Source, source) {
			return fmt.Errorf("a wrapper names the source %q, not %q", s.Source, source)
		}
	}
	if i := strings.Index(outside, mark); i >= 0 {
		return fmt.Errorf("text from outside (%q) is outside the wrappers: %q", mark, outside[max(0, i-80):min(len(outside), i+80)])
	}
	return nil
}
