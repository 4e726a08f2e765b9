package tts

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// split cuts text into chunks of at most limit bytes, at sentence ends
// where it can: whole sentences are packed into each chunk, a sentence
// longer than limit is cut at a space (or, with none, anywhere between
// two characters).
func split(text string, limit int) []string {
	var chunks []string
	cur := ""
	for _, s := range sentences(text) {
		for len(s) > limit {
			if cur != "" {
				chunks, cur = append(chunks, cur), ""
			}
			head, rest := cutAt(s, limit)
			chunks, s = append(chunks, head), rest
		}
		switch {
		case cur == "":
			cur = s
		case len(cur)+1+len(s) <= limit:
			cur += " " + s
		default:
			chunks, cur = append(chunks, cur), s
		}
	}
	if cur != "" {
		chunks = append(chunks, cur)
	}
	return chunks
}

// sentences splits text after each . ! ? … (and their full-width forms)
// followed by a space or the end, and at blank lines; each sentence is
// trimmed, empty ones left out.
func sentences(text string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if s := strings.Join(strings.Fields(text[start:end]), " "); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		next, _ := utf8.DecodeRuneInString(text[i+w:])
		if strings.ContainsRune(".!?…。！？", r) && (i+w == len(text) || unicode.IsSpace(next)) {
			add(i + w)
		} else if r == '\n' && next == '\n' {
			add(i)
		}
		i += w
	}
	add(len(text))
	return out
}

// cutAt cuts s into a head of at most limit bytes, at its last space
// there when it has one, and the rest.
func cutAt(s string, limit int) (head, rest string) {
	i := strings.LastIndexByte(s[:limit+1], ' ')
	if i <= 0 {
		i = limit
		for i > 1 && !utf8.RuneStart(s[i]) {
			i--
		}
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
}
