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

// errGlob is returned for a pattern whose expansion cannot be worked out
// exactly as bash would do it.
var errGlob = errors.New("a glob pattern bash may expand differently (character classes such as [[:alpha:]])")

// expandGlob expands the word w as bash does by default (no dotglob,
// nullglob, failglob, globstar or extglob): each slash-separated element
// with an unquoted pattern character is matched against the names in its
// directory; a name starting with "." only by a pattern starting with "."
// ("." and ".." included, which bash 5.2 skips: counting them is the safe
// side); no match leaves the word as it is. dir is where relative patterns
// start. It also returns the directories it read, which the caller checks
// like the results.
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
	// partial matches: the expanded text so far, as bash prints it.
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
		if _, err := path.Match(bashToGo(e), ""); err != nil {
			return nil, nil, errGlob
		}
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
			if strings.ContainsAny(e, "?[") {
				// What ? and a bracket expression match depends on the
				// locale for names that are not ASCII (a byte, or a
				// character of several bytes), and a bracket range on the
				// locale's collation in bash before 5.0: with such a name
				// in the directory, or a range, the expansion is not known.
				if hasRange(e) {
					return nil, nil, fmt.Errorf("a bracket range (%s) matches by the locale's collation in some versions of bash", e)
				}
				for _, n := range names {
					if !isASCII(n) {
						return nil, nil, fmt.Errorf("a ? or [...] pattern scans %s, which holds a name that is not ASCII (%q): bash matches such names by the locale", d, n)
					}
				}
			}
			if strings.Contains(e, "[") {
				// Bracket expressions are where bash's matching and this
				// one could differ: nothing in a directory they scan may be
				// a link or a special file, matched here or not.
				for _, n := range names {
					if st, err := os.Lstat(filepath.Join(real, n)); err == nil && n != "." && n != ".." &&
						!st.Mode().IsRegular() && !st.IsDir() {
						return nil, nil, fmt.Errorf("a bracket pattern scans %s, which holds a link or a special file (%s)", d, n)
					}
				}
			}
			for _, n := range names {
				if strings.HasPrefix(n, ".") && !strings.HasPrefix(unescape(e), ".") {
					continue
				}
				if ok, _ := path.Match(bashToGo(e), n); ok {
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

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasRange reports whether a pattern element has a bracket expression with
// a range (a-z).
func hasRange(e string) bool {
	in, first := false, false
	for i := 0; i < len(e); i++ {
		switch c := e[i]; {
		case c == '\\':
			i++
			first = false
		case !in && c == '[':
			in, first = true, true
			if i+1 < len(e) && (e[i+1] == '!' || e[i+1] == '^') {
				i++
			}
		case in && c == ']' && !first:
			in = false
		case in && c == '-' && !first && i+1 < len(e) && e[i+1] != ']':
			return true
		default:
			first = false
		}
	}
	return false
}

// bashToGo turns bash's bracket negation [!…] into path.Match's [^…].
func bashToGo(e string) string {
	return strings.ReplaceAll(e, "[!", "[^")
}
