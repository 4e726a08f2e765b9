package schema

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// appendJSON appends v as Encode writes it — encoding/json's bytes, HTML
// characters not escaped, object keys sorted — for the generic form
// (map[string]any, []any, string, json.Number, bool, nil), and reports
// false, leaving what it appended to be dropped, for anything else: other
// types, strings that need escapes other than \", \\, \n, \r and \t,
// numbers outside the plain grammar, nesting deeper than maxFastDepth.
// Encode then leaves the whole value to encoding/json, whose reflection,
// key sorting and second pass over every string were most of what encoding
// a thousand compiled schemas cost. TestEncodeIsEncodingJSON and
// FuzzEncode hold it to encoding/json's bytes.
func appendJSON(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxFastDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if x {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case string:
		return appendString(b, x)
	case json.Number:
		if x == "" {
			return append(b, '0'), true
		}
		if !simpleNumber(string(x)) {
			return b, false
		}
		return append(b, x...), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		var buf [16]string
		keys := buf[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendString(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendJSON(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// maxFastDepth bounds the nesting appendJSON writes; encoding/json tells
// a cycle by depth, and gets what is deeper.
const maxFastDepth = 256

// appendString appends s quoted as encoding/json quotes it without HTML
// escapes, when the only escapes it needs are \", \\, \n, \r and \t.
func appendString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return b, false
			}
			i += size
			continue
		}
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		default:
			return b, false
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}
