package fs

import (
	"bytes"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

const bom = "\uFEFF"

// textFile is a text file's content in the form edits work on: without a
// byte-order mark, and with LF line breaks when every break was CRLF. encode
// restores both.
type textFile struct {
	bom  bool
	crlf bool
	body string
}

// decodeText splits a file's bytes into its body and how to write it back.
func decodeText(b []byte) textFile {
	t := textFile{}
	if bytes.HasPrefix(b, []byte(bom)) {
		t.bom, b = true, b[len(bom):]
	}
	crlf := bytes.Count(b, []byte("\r\n"))
	if crlf > 0 && crlf == bytes.Count(b, []byte("\n")) {
		t.crlf = true
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	t.body = string(b)
	return t
}

// input brings text a model wrote into the body's form: no byte-order mark,
// LF line breaks when the file's are CRLF.
func (t textFile) input(s string) string {
	s = strings.TrimPrefix(s, bom)
	if t.crlf {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// encode returns body as the file's bytes: with the byte-order mark and the
// line breaks the file had.
func (t textFile) encode(body string) []byte {
	if t.crlf {
		body = strings.ReplaceAll(body, "\n", "\r\n")
	}
	if t.bom {
		body = bom + body
	}
	return []byte(body)
}

// looksBinary reports whether the start of a file holds bytes no text file
// has (a NUL).
func looksBinary(head []byte) bool {
	return bytes.IndexByte(head, 0) >= 0
}

// replacement replaces before[start:end] with text.
type replacement struct {
	start, end int
	text       string
}

// apply returns s with the replacements (sorted, not overlapping) made.
func apply(s string, reps []replacement) string {
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, r := range reps {
		b.WriteString(s[at:r.start])
		b.WriteString(r.text)
		at = r.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// lineIndex finds the lines of a text by byte offset. A final line break
// does not start another line.
type lineIndex struct {
	starts []int // offset of each line's first byte
	size   int
	endsNL bool
}

func newLineIndex(s string) lineIndex {
	li := lineIndex{size: len(s), endsNL: strings.HasSuffix(s, "\n")}
	if s == "" {
		return li
	}
	li.starts = append(li.starts, 0)
	for i := 0; i < len(s)-1; i++ {
		if s[i] == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

// lines returns the number of lines.
func (li lineIndex) lines() int { return len(li.starts) }

// lineOf returns the 0-based line holding offset off. The end of the text is
// on the line past the last when the text ends with a line break.
func (li lineIndex) lineOf(off int) int {
	if off >= li.size {
		if li.size == 0 || li.endsNL {
			return len(li.starts)
		}
		return len(li.starts) - 1
	}
	return sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
}

// offset returns the offset where line begins; lines past the end begin at
// the end.
func (li lineIndex) offset(line int) int {
	if line >= len(li.starts) {
		return li.size
	}
	return li.starts[line]
}

// folded is a text normalized for tolerant matching, with the way back to
// the original: byte i of text came from the original rune at
// [from[i], to[i]).
type folded struct {
	text     string
	from, to []int
}

// foldText normalizes s for tolerant matching: Unicode compatibility
// decomposition (NFKD, which equates exactly what NFKC does), typographic
// quotes and dashes as ASCII, special spaces as a space, zero-width
// characters dropped, and whitespace at the end of each line dropped.
func foldText(s string) folded {
	f := folded{from: make([]int, 0, len(s)), to: make([]int, 0, len(s))}
	var b []byte
	lineStart := 0 // index in b where the current line starts
	emit := func(out string, start, end int) {
		for i := 0; i < len(out); i++ {
			b = append(b, out[i])
			f.from = append(f.from, start)
			f.to = append(f.to, end)
		}
	}
	trimLine := func() {
		n := len(b)
		for n > lineStart && isLineSpace(b[n-1]) {
			n--
		}
		b, f.from, f.to = b[:n], f.from[:n], f.to[:n]
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			trimLine()
			emit("\n", i, i+size)
			lineStart = len(b)
		case r < utf8.RuneSelf:
			emit(s[i:i+size], i, i+size)
		default:
			if out, ok := foldRune(r); ok {
				emit(out, i, i+size)
			} else {
				emit(norm.NFKD.String(s[i:i+size]), i, i+size)
			}
		}
		i += size
	}
	trimLine()
	f.text = string(b)
	return f
}

func isLineSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// foldRune maps the characters models type differently from files: quotes,
// dashes, spaces; and drops invisible ones.
func foldRune(r rune) (string, bool) {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\u00B4':
		return "'", true
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u00AB', '\u00BB':
		return `"`, true
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE58', '\uFE63', '\uFF0D':
		return "-", true
	case '\u00A0', '\u1680', '\u202F', '\u205F', '\u3000':
		return " ", true
	case '\u200B', '\u2060', '\uFEFF':
		return "", true
	}
	if r >= '\u2000' && r <= '\u200A' {
		return " ", true
	}
	return "", false
}

// span is a byte range [start, end) of the original text.
type span struct{ start, end int }

// find returns the non-overlapping occurrences of sub in f that begin and
// end on whole original characters, as ranges of the original text.
func (f folded) find(sub string) []span {
	if sub == "" {
		return nil
	}
	var out []span
	for at := 0; ; {
		i := strings.Index(f.text[at:], sub)
		if i < 0 {
			return out
		}
		i += at
		j := i + len(sub)
		if (i == 0 || f.from[i] != f.from[i-1]) && (j == len(f.text) || f.from[j] != f.from[j-1]) {
			out = append(out, span{f.from[i], f.to[j-1]})
			at = j
		} else {
			at = i + 1
		}
	}
}

// findExact returns the non-overlapping occurrences of sub in s.
func findExact(s, sub string) []span {
	var out []span
	for at := 0; ; {
		i := strings.Index(s[at:], sub)
		if i < 0 {
			return out
		}
		out = append(out, span{at + i, at + i + len(sub)})
		at += i + len(sub)
	}
}
