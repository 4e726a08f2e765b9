// Package jsonscan reads the structure of JSON text without decoding it:
// the brackets outside strings, for depth limits and for finding where a
// value ends in a stream.
package jsonscan

import (
	"bytes"
	"iter"
)

// Brackets yields the index and byte of each bracket ({, }, [ or ]) of b
// that is not inside a string.
//
// Most of a tool list's bytes are inside strings (descriptions), so a
// string is skipped with bytes.IndexByte to its next quote rather than
// byte by byte: the quote ends the string unless an odd run of
// backslashes comes before it. (Byte by byte, this scan was 9% of the CPU
// of a start importing 1,000 tools, which reads the 1.2 MB list three
// times.) A string that is not closed runs to the end of b, as before.
// TestBracketsAsByteByByte holds it to the byte-by-byte scan.
func Brackets(b []byte) iter.Seq2[int, byte] {
	return func(yield func(int, byte) bool) {
		for i := 0; i < len(b); i++ {
			switch c := b[i]; c {
			case '"':
				i = stringEnd(b, i+1)
			case '{', '[', '}', ']':
				if !yield(i, c) {
					return
				}
			}
		}
	}
}

// stringEnd returns the index of the quote that closes the string whose
// contents start at b[i], or len(b) when none does.
func stringEnd(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		q += i
		n := 0 // backslashes right before the quote
		for j := q - 1; j >= i && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
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
