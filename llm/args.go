package llm

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ArgBuffer assembles a tool call's arguments from streamed fragments. It
// scans each byte once, keeping what it needs to close the JSON at any
// point (open containers, whether it is inside a string, the last place a
// value ended), so the arguments can be shown as they grow; re-parsing is
// spaced out as the text grows, which keeps assembly linear in its size.
type ArgBuffer struct {
	buf      []byte
	stack    []byte // open containers: '{' or '['
	inString bool
	escaped  bool
	// safe is the length of the longest prefix known to become valid JSON
	// when closed with safeClose.
	safe      int
	safeClose []byte
	parsedAt  int
}

// Write appends a fragment.
func (b *ArgBuffer) Write(p []byte) {
	start := len(b.buf)
	b.buf = append(b.buf, p...)
	for i := start; i < len(b.buf); i++ {
		c := b.buf[i]
		if b.inString {
			switch {
			case b.escaped:
				b.escaped = false
			case c == '\\':
				b.escaped = true
			case c == '"':
				b.inString = false
			}
			continue
		}
		switch c {
		case '"':
			b.inString = true
		case '{', '[':
			b.stack = append(b.stack, c)
			b.mark(i + 1)
		case '}', ']':
			if len(b.stack) > 0 {
				b.stack = b.stack[:len(b.stack)-1]
			}
			b.mark(i + 1)
		case ',':
			b.mark(i)
		}
	}
}

// mark records that buf[:n] closes into valid JSON with the current stack.
func (b *ArgBuffer) mark(n int) {
	b.safe = n
	b.safeClose = closers(b.safeClose[:0], b.stack)
}

func closers(dst, stack []byte) []byte {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			dst = append(dst, '}')
		} else {
			dst = append(dst, ']')
		}
	}
	return dst
}

// Len returns the number of bytes received.
func (b *ArgBuffer) Len() int { return len(b.buf) }

// Bytes returns the text received.
func (b *ArgBuffer) Bytes() []byte { return b.buf }

// Partial returns the arguments received so far, closed into a valid JSON
// object, when enough has arrived since the last time to parse them again
// (ok false otherwise, or when they do not form an object yet).
func (b *ArgBuffer) Partial() (json.RawMessage, bool) {
	n := len(b.buf)
	if n == 0 || n-b.parsedAt < max(1, b.parsedAt/4) {
		return nil, false
	}
	b.parsedAt = n
	out, _ := b.closed()
	return out, out != nil
}

// closed returns the text closed into a JSON object, and whether an
// incomplete trailing value had to be dropped; nil when it cannot be.
func (b *ArgBuffer) closed() (json.RawMessage, bool) {
	t := bytes.TrimLeft(b.buf, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, false
	}
	whole := append([]byte(nil), b.buf...)
	if b.inString {
		if b.escaped {
			whole = whole[:len(whole)-1]
		}
		whole = append(whole, '"')
	}
	whole = closers(whole, b.stack)
	if json.Valid(whole) {
		return whole, false
	}
	cut := append(append([]byte(nil), b.buf[:b.safe]...), b.safeClose...)
	if json.Valid(cut) {
		return cut, true
	}
	return nil, false
}

// The repairs RepairArguments notes.
const (
	RepairString   = "decoded the arguments from a JSON string"
	RepairCommas   = "removed trailing commas"
	RepairTruncate = "closed truncated JSON"
	RepairDropped  = "closed truncated JSON, dropping an incomplete last value"
)

// RepairArguments returns a tool call's final arguments as a JSON object:
// empty arguments become {}, a JSON string holding an object is decoded,
// trailing commas are removed and truncated JSON is closed. repair says
// what was changed ("" for nothing); ok is false when no object could be
// made, and out is then the text as received.
func RepairArguments(raw []byte) (out json.RawMessage, repair string, ok bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return json.RawMessage("{}"), "", true
	}
	if json.Valid(t) {
		switch t[0] {
		case '{':
			return t, "", true
		case '"':
			var inner string
			if json.Unmarshal(t, &inner) == nil {
				if o, r, ok := RepairArguments([]byte(inner)); ok && len(bytes.TrimSpace([]byte(inner))) > 0 {
					return o, joinRepairs(RepairString, r), true
				}
			}
		}
		return t, "", false
	}
	var notes []string
	if s := withoutTrailingCommas(t); !bytes.Equal(s, t) {
		notes = append(notes, RepairCommas)
		t = s
		if json.Valid(t) && t[0] == '{' {
			return t, joinRepairs(notes...), true
		}
	}
	var b ArgBuffer
	b.Write(t)
	if c, dropped := b.closed(); c != nil {
		if dropped {
			notes = append(notes, RepairDropped)
		} else {
			notes = append(notes, RepairTruncate)
		}
		// A truncated text may end in a comma before the closers.
		return withoutTrailingCommas(c), joinRepairs(notes...), true
	}
	return bytes.TrimSpace(raw), "", false
}

func joinRepairs(r ...string) string {
	var out []string
	for _, s := range r {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// withoutTrailingCommas removes commas, outside strings, that only
// whitespace separates from a closing brace or bracket.
func withoutTrailingCommas(t []byte) []byte {
	out := make([]byte, 0, len(t))
	inString, escaped := false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(t) && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r') {
				j++
			}
			if j < len(t) && (t[j] == '}' || t[j] == ']') {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}
