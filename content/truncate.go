// Package content shapes the text models read: it cuts long output without
// splitting a character (keeping the end when the end matters), makes text
// valid UTF-8, and wraps text from outside sources so it cannot pass for
// instructions.
package content

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Cut is the outcome of cutting a text.
type Cut struct {
	// Head and Tail are the kept parts; Tail is empty when only the head is kept.
	Head, Tail string
	// Omitted is how many characters were left out.
	Omitted int
	// HeadEnd is where Head ends in the original text, in characters: the
	// offset to read the rest from.
	HeadEnd int
}

// Truncated reports whether anything was left out.
func (c Cut) Truncated() bool { return c.Omitted > 0 }

// TailShare is the part of the budget a head-and-tail cut gives to the tail.
const TailShare = 0.3

// Truncate keeps at most max characters of s (runes, never splitting one).
// When keepTail is set it keeps the head and the tail (TailShare of the
// budget), else only the head. A cut falls at a line break when there is
// one in the last half of the head (the first half of the tail), so that
// lines are kept whole.
func Truncate(s string, max int, keepTail bool) Cut {
	if max < 0 {
		max = 0
	}
	if len(s) <= max { // bytes ≥ characters: nothing to cut
		return Cut{Head: s, HeadEnd: utf8.RuneCountInString(s)}
	}
	headChars := max
	tailChars := 0
	if keepTail {
		tailChars = int(float64(max) * TailShare)
		headChars = max - tailChars
	}
	headEnd := byteOffset(s, headChars)
	if headEnd == len(s) {
		return Cut{Head: s, HeadEnd: utf8.RuneCountInString(s)}
	}
	restChars := utf8.RuneCountInString(s[headEnd:])
	if restChars <= tailChars {
		return Cut{Head: s, HeadEnd: headChars + restChars}
	}
	if i := strings.LastIndexByte(s[:headEnd], '\n'); i >= 0 {
		if back := utf8.RuneCountInString(s[i+1 : headEnd]); back <= headChars/2 {
			headEnd, headChars, restChars = i+1, headChars-back, restChars+back
		}
	}
	c := Cut{Head: s[:headEnd], HeadEnd: headChars, Omitted: restChars}
	if tailChars > 0 {
		rest := s[headEnd:]
		start := byteOffsetFromEnd(rest, tailChars)
		if i := strings.IndexByte(rest[start:], '\n'); i >= 0 && start+i+1 < len(rest) {
			if skip := utf8.RuneCountInString(rest[start : start+i+1]); skip <= tailChars/2 {
				start, tailChars = start+i+1, tailChars-skip
			}
		}
		c.Tail, c.Omitted = rest[start:], restChars-tailChars
	}
	return c
}

// HeadBytes returns the longest start of s that is at most n bytes and does
// not split a character.
func HeadBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// Chars returns up to n characters of s starting at character from: a page
// of a text measured, like every limit of this package, in characters.
func Chars(s string, from, n int) string {
	s = s[byteOffset(s, from):]
	return s[:byteOffset(s, n)]
}

// byteOffset returns the byte offset of the n-th character of s (len(s) when
// s is shorter).
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// byteOffsetFromEnd returns the byte offset where the last n characters of s
// begin.
func byteOffsetFromEnd(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

// Head returns s cut to at most max characters, with suffix appended when
// anything was cut.
func Head(s string, max int, suffix string) string {
	c := Truncate(s, max, false)
	if !c.Truncated() {
		return s
	}
	return c.Head + suffix
}

// errorTail matches an ending that says how things went: an error, a stack
// trace, a failure, a summary.
var errorTail = regexp.MustCompile(`(?i)\b(error|exception|traceback|panic|fatal|failed|failure|fail|denied|refused|summary|total|passed|exit(ed)?( with)? (code|status))\b`)

// EndMatters reports whether the end of s carries information a model needs
// — an error, a traceback, a summary, closing JSON — so a cut should keep it.
func EndMatters(s string) bool {
	end := strings.TrimRightFunc(s[byteOffsetFromEnd(s, 2000):], func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' })
	if end == "" {
		return false
	}
	if last := end[len(end)-1]; last == '}' || last == ']' {
		return true
	}
	return errorTail.MatchString(end)
}

// ValidUTF8 returns s with every invalid byte sequence replaced by U+FFFD.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// FirstLine returns the first non-empty line of s, cut to max characters.
func FirstLine(s string, max int) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			return Head(line, max, "…")
		}
	}
	return ""
}

// Omission renders the marker for omitted characters.
func Omission(n int) string {
	return fmt.Sprintf("[... %d more characters truncated]", n)
}

// ReadOnNotice is [Omission] followed by how to read the omitted characters
// with result_read: the call id, the offset to read from and a page size.
func ReadOnNotice(omitted int, callID string, offset, limit int) string {
	args, _ := json.Marshal(map[string]any{"callId": callID, "offset": offset, "limit": limit})
	return strings.TrimSuffix(Omission(omitted), "]") + fmt.Sprintf(". The full output is kept: call result_read with %s to read them.]", args)
}
