package shell

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// errGlob is returned for a pattern with a character class ([[:alpha:]],
// [=a=], [.a.]), which this expansion does not implement.
var errGlob = errors.New("a glob pattern with a character class such as [[:alpha:]], which is not expanded without approval (list the names, or use * and ?)")

// expandGlob expands the word w for a command that runs unasked, the way
// bash does by default (no dotglob, nullglob, failglob, globstar or
// extglob): each slash-separated element with an unquoted pattern
// character is matched against the names in its directory (? matching one
// character of UTF-8, bracket ranges by code point); a name starting with
// "." only by a pattern starting with "." ("." and ".." included, as bash
// before 5.2 does); the matches are sorted byte by byte; no match leaves
// the word as it is. dir is where relative patterns start. It also
// returns the directories it read, which the caller checks like the
// results.
//
// This expansion is the one that counts: the command then runs with its
// results as quoted words (see analysis.script), so where bash would
// expand differently (the locale's collation and character set, shell
// options) it does not get the chance.
func expandGlob(w word, dir string) (matches, read []string, err error) {
	if !w.glob {
		return []string{w.value}, nil, nil
	}
	pat := w.pattern
	if strings.Contains(pat, "[:") || strings.Contains(pat, "[=") || strings.Contains(pat, "[.") {
		return nil, nil, errGlob
	}
	abs := strings.HasPrefix(pat, "/")
	elems := strings.Split(pat, "/")
	// partial matches: the expanded text so far.
	partial := []string{""}
	if abs {
		partial, elems = []string{"/"}, elems[1:]
	}
	for i, e := range elems {
		last := i == len(elems)-1
		if !hasMeta(e) {
			lit := unescape(e)
			for j := range partial {
				partial[j] = joinGlob(partial[j], lit)
			}
			continue
		}
		goPat := bashToGo(e)
		if _, err := path.Match(goPat, ""); err != nil {
			return nil, nil, fmt.Errorf("the glob pattern %q is not one that can be expanded without approval (%v)", e, err)
		}
		dotted := strings.HasPrefix(unescape(e), ".")
		var next []string
		for _, p := range partial {
			d := p
			if d == "" {
				d = "."
			}
			real := d
			if !filepath.IsAbs(real) {
				real = filepath.Join(dir, real)
			}
			read = append(read, d)
			names, err := readNames(real)
			if err != nil {
				continue
			}
			for _, n := range names {
				if strings.HasPrefix(n, ".") && !dotted {
					continue
				}
				if ok, _ := path.Match(goPat, n); ok {
					if !last {
						if st, err := os.Stat(filepath.Join(real, n)); err != nil || !st.IsDir() {
							continue // a/*/b: only directories lead on
						}
					}
					next = append(next, joinGlob(p, n))
				}
			}
		}
		partial = next
		if len(partial) == 0 {
			return []string{w.value}, read, nil
		}
	}
	slices.Sort(partial)
	return partial, read, nil
}

// joinGlob appends an element to a partial expansion.
func joinGlob(p, e string) string {
	switch p {
	case "":
		return e
	case "/":
		return "/" + e
	}
	return p + "/" + e
}

// readNames lists a directory's names, with "." and "..".
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	return append(names, ".", ".."), err
}

// hasMeta reports whether a pattern element has an unescaped pattern
// character.
func hasMeta(e string) bool {
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescape removes a pattern element's backslash escapes.
func unescape(e string) string {
	if !strings.Contains(e, `\`) {
		return e
	}
	var b strings.Builder
	for i := 0; i < len(e); i++ {
		if e[i] == '\\' && i+1 < len(e) {
			i++
		}
		b.WriteByte(e[i])
	}
	return b.String()
}

// bashToGo turns a pattern element as bash writes it into one for
// path.Match, which reads bracket expressions more strictly: [!…] is a
// negation ([^…]); a "]" first in a bracket expression and a "-" first or
// last are members, not syntax; a "[" that no "]" closes is itself.
// Escaped characters stay escaped.
func bashToGo(e string) string {
	var b strings.Builder
	for i := 0; i < len(e); i++ {
		switch c := e[i]; {
		case c == '\\' && i+1 < len(e):
			b.WriteString(e[i : i+2])
			i++
		case c == '[':
			end := bracketEnd(e, i)
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			b.WriteByte('[')
			j := i + 1
			if e[j] == '!' || e[j] == '^' {
				b.WriteByte('^')
				j++
			}
			for first := j; j < end; j++ {
				switch m := e[j]; {
				case m == '\\':
					b.WriteString(e[j : j+2])
					j++
				case m == ']' || m == '-' && (j == first || j == end-1):
					b.WriteString(`\` + string(m))
				default:
					b.WriteByte(m)
				}
			}
			b.WriteByte(']')
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bracketEnd returns the index of the "]" that closes the bracket
// expression opened at e[open], as bash reads it (a "]" right after "[" or
// "[!" is a member), or -1 when none does.
func bracketEnd(e string, open int) int {
	j := open + 1
	if j < len(e) && (e[j] == '!' || e[j] == '^') {
		j++
	}
	if j < len(e) && e[j] == ']' {
		j++
	}
	for ; j < len(e); j++ {
		switch e[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return -1
}
