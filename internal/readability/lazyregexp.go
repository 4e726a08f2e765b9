package readability

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled the first time it is used,
// not in the package's initialization (Toolbelt's patch: see PATCHES.md).
type lazyRegexp struct {
	expr string
	once sync.Once
	rx   *regexp.Regexp
}

// lazyCompile returns expr to be compiled, as regexp.MustCompile would, on
// first use.
func lazyCompile(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) re() *regexp.Regexp {
	l.once.Do(func() { l.rx = regexp.MustCompile(l.expr) })
	return l.rx
}

func (l *lazyRegexp) MatchString(s string) bool              { return l.re().MatchString(s) }
func (l *lazyRegexp) FindAllString(s string, n int) []string { return l.re().FindAllString(s, n) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string   { return l.re().FindStringSubmatch(s) }
func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.re().ReplaceAllString(src, repl)
}
func (l *lazyRegexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return l.re().ReplaceAllStringFunc(src, repl)
}
func (l *lazyRegexp) Split(s string, n int) []string { return l.re().Split(s, n) }
