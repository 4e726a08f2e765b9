// Package textclip shortens text for one-line messages, lists and previews
// — an error's excerpt of what was received, a sub-agent's answer in a
// list, a value in a schema's description, a command in a table — the same
// way everywhere.
package textclip

// Clip returns s when it has at most n characters; otherwise its first n
// characters followed by "…". Characters are runes, so a UTF-8 sequence is
// never split and a limit means the same in any script; a byte that is not
// valid UTF-8 counts as one character and is kept as it is.
func Clip(s string, n int) string {
	if len(s) <= n { // at least as many bytes as characters: nothing to cut
		return s
	}
	kept := 0
	for i := range s {
		if kept >= n {
			return s[:i] + "…"
		}
		kept++
	}
	return s
}
