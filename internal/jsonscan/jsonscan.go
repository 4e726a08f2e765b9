// Package jsonscan reads the structure of JSON text without decoding it:
// the brackets outside strings, for depth limits and for finding where a
// value ends in a stream.
package jsonscan

import "iter"

// Brackets yields the index and byte of each bracket ({, }, [ or ]) of b
// that is not inside a string.
func Brackets(b []byte) iter.Seq2[int, byte] {
	return func(yield func(int, byte) bool) {
		inString, escaped := false, false
		for i, c := range b {
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[' || c == '}' || c == ']':
				if !yield(i, c) {
					return
				}
			}
		}
	}
}

// Deeper reports whether objects and arrays nest in b more than limit deep.
// A closing bracket without its opening one counts for nothing.
func Deeper(b []byte, limit int) bool {
	depth := 0
	for _, c := range Brackets(b) {
		if c == '{' || c == '[' {
			depth++
			if depth > limit {
				return true
			}
		} else if depth > 0 {
			depth--
		}
	}
	return false
}
