package compact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// analyzer turns text into search terms. Its switches exist so the quality
// test can measure what each step is worth; the index always uses
// [defaultAnalyzer].
type analyzer struct {
	// stop drops English function words ("the", "of", "my").
	stop bool
	// stem adds to each word its stem, so inflected forms meet ("creating",
	// "created", "creates" → "creat"; "directories" → "directory").
	stem bool
	// synonyms expands a query with the words tool descriptions use for
	// the same thing ("folder" → "directory", "repo" → "repository").
	synonyms bool
	// numbers keeps terms that are only digits ("42", "1280").
	numbers bool
}

// defaultAnalyzer is what the index uses: every step on, numbers dropped
// (see the quality numbers in the README section).
var defaultAnalyzer = analyzer{stop: true, stem: true, synonyms: true}

// words splits text into lowercase words: at every character that is not a
// letter or digit, at camelCase humps ("pageId" → page, id; "HTTPServer" →
// http, server) and between letters and digits ("utf8" stays whole, "h2"
// stays whole: only a digit run followed by letters splits, "3g" → 3, g).
func words(text string) []string {
	var out []string
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(text[start:end]))
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev = 0
			continue
		}
		if start >= 0 {
			switch {
			case unicode.IsUpper(r) && unicode.IsLower(prev):
				flush(i) // pageId
			case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev) && !pluralAcronym(text, i):
				// HTTPServer: the last capital starts the next word
				flush(i - utf8.RuneLen(prev))
				start = i - utf8.RuneLen(prev)
			case unicode.IsLetter(r) && unicode.IsDigit(prev):
				flush(i) // 3g
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	flush(len(text))
	return out
}

// pluralAcronym reports whether the "s" at i ends a word of capitals, as in
// "PRs" or "URLs".
func pluralAcronym(text string, i int) bool {
	if text[i] != 's' {
		return false
	}
	next, _ := utf8.DecodeRuneInString(text[i+1:])
	return !unicode.IsLetter(next)
}

// terms analyzes text into search terms, in order, repeats kept. With
// stemming on, each word gives two terms: the word itself and its stem, so
// an exact match counts twice and a match of another form of the word once.
func (a analyzer) terms(text string) []string {
	var out []string
	for _, w := range a.words(text) {
		out = append(out, a.forms(w)...)
	}
	return out
}

// words returns the words of text that carry meaning: stop words and
// numbers dropped as configured.
func (a analyzer) words(text string) []string {
	ws := words(text)
	out := ws[:0]
	for _, w := range ws {
		if a.stop && stopWords[w] || !a.numbers && (isNumber(w) || numberWords[w]) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// stemMark starts a stem term, so stems and words never collide.
const stemMark = "~"

// forms returns the terms of one word: the word and, with stemming on, its
// stem.
func (a analyzer) forms(w string) []string {
	if !a.stem {
		return []string{w}
	}
	return []string{w, stemMark + stem(w)}
}

// key is the form of a word that finds its synonyms: its stem, or the word
// when stemming is off.
func (a analyzer) key(w string) string {
	if a.stem {
		return stem(w)
	}
	return w
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// numberWords are numbers written out; like digits, they say how many or
// which, not what.
var numberWords = setOf("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "twenty", "thirty", "fifty", "hundred", "thousand", "million")

// stopWords are English function words and request fillers: they say
// nothing about which tool is wanted.
var stopWords = setOf(
	"a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "into", "onto", "about",
	"and", "or", "but", "if", "then", "than", "so", "as", "via",
	"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done",
	"i", "me", "my", "mine", "we", "us", "our", "you", "your", "it", "its", "they", "them", "their",
	"this", "that", "these", "those", "there", "here",
	"what", "which", "who", "whom", "whose", "when", "where", "why", "how",
	"can", "could", "would", "should", "will", "shall", "may", "might", "must",
	"please", "want", "need", "some", "any", "each", "every", "just", "also", "s", "t",
)

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// stem is a light suffix stripper for English, in the spirit of the first
// steps of Porter's algorithm: plurals, -ing, -ed, -ation, -ly and a final
// e, so that the forms of one verb or noun meet ("create", "creates",
// "creating", "created", "creation" → "creat"). It never shortens a word
// below three letters, and leaves words of three letters or fewer alone.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && hasVowel(w[:len(w)-3]) && len(w) >= 6:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && hasVowel(w[:len(w)-2]) && len(w) >= 5:
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ation") && len(w) >= 8:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ly") && len(w) >= 6:
		w = w[:len(w)-2]
	}
	if strings.HasSuffix(w, "e") && len(w) >= 5 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns a doubled final consonant into one ("runn" → "run",
// "dropp" → "drop"), except l, s and z, which English keeps doubled in the
// base form ("fill", "pass", "buzz").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// synonymGroups are words people and models use for the same thing in
// requests about tools, each group meaning one thing. A query word finds
// the other words of its groups too, at a lower weight. Multi-word
// expansions ("pr" → pull request) are written with spaces.
var synonymGroups = [][]string{
	// actions
	{"read", "cat", "view"},
	{"show", "display", "view", "print"},
	{"write", "save", "store", "persist"},
	{"update", "change", "modify", "edit", "alter", "fix", "tweak", "correct"},
	{"delete", "remove", "erase", "forget", "drop", "discard", "destroy", "purge"},
	{"create", "make", "new", "generate", "init", "initialize"},
	{"build", "compile", "make"},
	{"copy", "duplicate", "clone"},
	{"move", "rename"},
	{"search", "find", "locate", "lookup", "query", "seek", "google"},
	{"run", "execute", "exec", "launch", "invoke"},
	{"start", "begin", "launch", "trigger"},
	{"stop", "end", "halt", "terminate", "kill", "cancel", "abort"},
	{"close", "shut", "quit", "exit"},
	{"wait", "pause", "sleep", "delay"},
	{"fetch", "download", "retrieve", "get"},
	{"send", "post", "submit"},
	{"upload", "attach"},
	{"select", "choose", "pick", "switch"},
	{"navigate", "visit", "browse", "goto"},
	{"click", "tap"},
	{"monitor", "watch", "track"},
	{"compress", "zip", "gzip", "archive"},
	{"scrape", "extract"},
	{"think", "reason", "reasoning", "thought", "reflect"},
	{"memory", "remember", "memorize", "recall", "knowledge", "know"},
	{"rate", "rating", "feedback"},
	{"sum", "total", "plus"},
	// things
	{"directory", "folder", "dir"},
	{"repository", "repo"},
	{"pull request", "pr", "merge request"},
	{"issue", "bug", "ticket"},
	{"commit", "history"},
	{"command", "shell", "terminal", "bash", "cli"},
	{"web", "website", "site", "internet", "online"},
	{"page", "tab", "webpage"},
	{"url", "link", "address"},
	{"image", "picture", "photo", "img", "png", "jpeg", "jpg"},
	{"screenshot", "screengrab"},
	{"observation", "fact", "note"},
	{"content", "text", "body"},
	{"message", "text"},
	{"article", "post", "blog"},
	{"paper", "arxiv", "publication", "academic"},
	{"documentation", "docs", "doc"},
	{"javascript", "js", "script"},
	{"css", "style", "stylesheet"},
	{"key", "keyboard", "keystroke"},
	{"environment", "env"},
	{"dialog", "popup", "alert", "modal", "prompt"},
	{"dropdown", "select", "combobox"},
	{"error", "exception", "failure"},
	{"markdown", "md"},
	{"video", "screencast", "recording"},
	{"profile", "trace", "performance"},
	{"multiple", "several", "many", "batch"},
	{"size", "big", "large", "bytes"},
	{"latest", "recent", "newest", "last"},
	{"status", "state", "finished", "complete"},
	{"project", "workspace", "codebase"},
	{"theme", "color scheme", "appearance"},
	{"viewport", "window", "screen"},
	{"device", "mobile", "phone", "iphone", "android"},
	{"network", "traffic"},
	{"browser", "chrome", "chromium"},
}

// weightedTerm is one term of an analyzed query with its weight.
type weightedTerm struct {
	term   string
	weight float64
}

// synonymWeight is the weight of a term a synonym brought into a query.
const synonymWeight = 0.5

// synonymTable maps a word's key to the phrases (lists of words) of its
// groups.
type synonymTable map[string][][]string

// synonymTable returns the table of synonymGroups for a.
func (a analyzer) synonymTable() synonymTable {
	table := synonymTable{}
	for _, group := range synonymGroups {
		for i, phrase := range group {
			if strings.Contains(phrase, " ") {
				continue // a phrase is an expansion, never a key
			}
			k := a.key(phrase)
			for j, other := range group {
				if j != i {
					table[k] = append(table[k], words(other))
				}
			}
		}
	}
	return table
}

// query analyzes a search query: its own terms at weight 1 and, when
// synonyms are on, the terms their synonyms bring at a lower weight. Each
// term appears once, with its highest weight.
func (a analyzer) query(text string, syn synonymTable) []weightedTerm {
	weights := map[string]float64{}
	var order []string
	add := func(w string, weight float64) {
		for _, t := range a.forms(w) {
			if old, ok := weights[t]; !ok {
				order = append(order, t)
				weights[t] = weight
			} else if weight > old {
				weights[t] = weight
			}
		}
	}
	own := a.words(text)
	for _, w := range own {
		add(w, 1)
	}
	if a.synonyms {
		for _, w := range own {
			for _, phrase := range syn[a.key(w)] {
				for _, s := range phrase {
					add(s, synonymWeight/float64(len(phrase)))
				}
			}
		}
	}
	out := make([]weightedTerm, len(order))
	for i, t := range order {
		out[i] = weightedTerm{t, weights[t]}
	}
	return out
}
