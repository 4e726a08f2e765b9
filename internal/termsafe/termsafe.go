// Package termsafe makes text from outside (tool names, titles and
// descriptions from MCP servers, arguments, schedule messages, model text)
// safe to print to a terminal: every character a terminal would act on
// rather than show, or would show as nothing, is written as a visible
// escape. An escape sequence can then neither move the cursor, erase the
// screen, set the clipboard (OSC 52) or a window title, nor reorder text
// (bidi overrides): it prints as text.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Text returns s with its control characters (C0 but line feed and tab,
// DEL, C1), invisible format characters (bidi embeddings, overrides and
// isolates, zero-width characters, tag characters, line and paragraph
// separators) and bytes that are not UTF-8 written as escapes: ESC as
// \x1b, U+202E as \u202e, a stray byte 0x9b as \x9b. It returns s itself
// when there is nothing to escape.
func Text(s string) string { return escape(s, false) }

// Line is Text for text shown on one line (a table cell, a name, a prompt's
// field): line feeds and tabs are escaped too, as \n and \t.
func Line(s string) string { return escape(s, true) }

func escape(s string, line bool) string {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, n, line) {
			return escapeFrom(s, i, line)
		}
		i += n
	}
	return s
}

// escapeFrom escapes s from i, where the first character to escape is.
func escapeFrom(s string, i int, line bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !mustEscape(r, n, line):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// mustEscape says whether the character r (n bytes of UTF-8) must be escaped.
func mustEscape(r rune, n int, line bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n' || r == '\t':
		return line
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	}
	return r >= 0xa0 && (unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp))
}

// JSON returns the JSON text b with every character Text would escape
// written as a JSON escape (\u009b, \u202e, \udb40\udc41): the same JSON
// value, which a terminal shows as it is. encoding/json escapes the C0
// controls but leaves DEL, C1 and the invisible format characters raw.
func JSON(b []byte) []byte {
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if mustEscape(r, n, false) {
			return jsonFrom(b, i)
		}
		i += n
	}
	return b
}

// jsonFrom escapes b from i, where the first character to escape is.
func jsonFrom(b []byte, i int) []byte {
	out := append(make([]byte, 0, len(b)+12), b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case !mustEscape(r, n, false):
			out = append(out, b[i:i+n]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			// A byte that is not UTF-8 stands for U+FFFD, as encoding/json
			// reads it.
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}
