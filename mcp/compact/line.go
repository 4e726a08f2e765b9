package compact

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/tool"
)

// MaxLineChars is about how long a one-line description may be.
const MaxLineChars = 120

// OneLine returns the first sentence of a tool description, on one line and
// cut at a word boundary to at most MaxLineChars characters ("…" marks a
// cut).
func OneLine(description string) string { return clip(firstSentence(description)) }

// Summary is the line that lists t in compact mode: its Meta.Summary (from
// configuration, a directory tool's metadata.json or an imported server's
// settings) on one line and cut as OneLine cuts, or else OneLine of its
// description.
func Summary(t tool.Tool) string {
	if s := strings.Join(strings.Fields(t.Meta.Summary), " "); s != "" {
		return clip(s)
	}
	return OneLine(t.Description)
}

// clip cuts s at a word boundary to at most MaxLineChars characters.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= MaxLineChars {
		return s
	}
	cut := []rune(s)[:MaxLineChars-1]
	if i := lastSpace(cut); i > MaxLineChars/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(string(cut), " ,;:-(") + "…"
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = setOf("e.g", "i.e", "etc", "vs", "approx", "incl", "cf", "ca", "no")

// emphasis is Markdown bold text, "**Best for:**"; it starts with a letter
// or digit, so globs such as "src/**/*.go" are left alone.
// It is compiled on first use, not when the program starts.
var emphasis = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*([\p{L}\p{N}][^*]*?)\*\*`) })

// firstSentence returns the first sentence of the first line of text that
// has words, without Markdown emphasis or list and heading markers.
func firstSentence(text string) string {
	var line string
	for l := range strings.Lines(text) {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#>"))
		for _, bullet := range []string{"- ", "* ", "+ "} {
			l = strings.TrimPrefix(l, bullet)
		}
		if l = strings.TrimSpace(emphasis().ReplaceAllString(l, "$1")); l != "" {
			line = l
			break
		}
	}
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '.', '!', '?':
		default:
			continue
		}
		if i+1 < len(line) && line[i+1] != ' ' {
			continue
		}
		word := line[:i]
		if j := strings.LastIndexByte(word, ' '); j >= 0 {
			word = word[j+1:]
		}
		if abbreviations[strings.ToLower(strings.TrimLeft(word, "("))] {
			continue
		}
		return line[:i+1]
	}
	return line
}
