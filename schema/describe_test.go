package schema

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDefaultNotRepeated: a default the description already states is not
// added to it again; one it does not state is.
func TestDefaultNotRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		desc string
		def  string
		want bool
	}{
		{`How deep to list (default 1).`, `1`, true},
		{`Type of format. Default is "png"`, `"png"`, true},
		{`Type of format. Default is png.`, `"png"`, true},
		{`Defaults to 30 seconds.`, `30`, true},
		{`Default: true`, `true`, true},
		{`How deep to list (default 10).`, `1`, false},
		{`Default 1.5 seconds`, `1`, false},
		{`The default name.`, `"name"`, false},
		{``, `1`, false},
	} {
		if got := saysAlready(c.desc, "default: "+c.def); got != c.want {
			t.Errorf("saysAlready(%q, default %s) = %v, want %v", c.desc, c.def, got, c.want)
		}
	}
	if saysAlready("default 1", "at most 1 items") {
		t.Error("a hint other than a default is never dropped")
	}
}

// saysAlreadyRegexp is saysAlready as it was first written, with a regular
// expression: the specification the string search must agree with.
func saysAlreadyRegexp(description, hint string) bool {
	v, ok := strings.CutPrefix(hint, "default: ")
	if !ok || description == "" {
		return false
	}
	pattern := `(?i)\bdefault(?:s to| is|:)?\s+` + regexp.QuoteMeta(v) + `(?:[^\w.-]|\.(?:\s|$)|$)`
	if u, err := strconv.Unquote(v); err == nil && u != "" {
		pattern += `|(?i)\bdefault(?:s to| is|:)\s+` + regexp.QuoteMeta(u) + `(?:[^\w.-]|\.(?:\s|$)|$)`
	}
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(description)
}

// saysAlreadyCases are descriptions and defaults around every edge of the
// match: connectors, case, word boundaries, what may follow the value,
// spacing, quoting and non-ASCII case folding.
var saysAlreadyCases = []struct{ desc, def string }{
	{`How deep to list (default 1).`, `1`},
	{`Type of format. Default is "png"`, `"png"`},
	{`Type of format. Default is png.`, `"png"`},
	{`Type of format. Default png.`, `"png"`},
	{`Type of format. DEFAULT: PNG`, `"png"`},
	{`Defaults to 30 seconds.`, `30`},
	{`defaults to 30s`, `30`},
	{`defaults to 30-40`, `30`},
	{`defaults to 30_`, `30`},
	{`defaults to 30.5`, `30`},
	{`defaults to 30.`, `30`},
	{"defaults to 30.\nNext", `30`},
	{`defaults to 30…`, `30`},
	{`Default: true`, `true`},
	{`Default:true`, `true`},
	{"Default:\t\ttrue,", `true`},
	{`Default  is  1`, `1`},
	{`default is1`, `1`},
	{`bydefault 1`, `1`},
	{`_default 1`, `1`},
	{`-default 1`, `1`},
	{`(default 10).`, `1`},
	{`Default 1.5 seconds`, `1`},
	{`The default name.`, `"name"`},
	{`The default is name.`, `"name"`},
	{`default default 7`, `7`},
	{`default x, default 7`, `7`},
	{`defaults is 7`, `7`},
	{`default: " padded"`, `" padded"`},
	{`default:  padded`, `" padded"`},
	{`default: ""`, `""`},
	{`default is ["a","b"]`, `["a","b"]`},
	{`default {"a":1}`, `{"a":1}`},
	{`default is null`, `null`},
	{`Default is OFFSET`, `"offset"`},
	{"default is \u212a", `"k"`},
	{"default\u017f to 3", `3`},
	{"Default is stra\u00dfe", `"STRASSE"`},
	{"default is \xff1", `1`},
	{`default is a.b`, `"a"`},
	{`default is a+b`, `"a+b"`},
	{`default is (x)`, `"(x)"`},
	{``, `1`},
}

// TestSaysAlreadyMatchesItsRegexp: the string search finds exactly what
// the regular expression it replaced finds.
func TestSaysAlreadyMatchesItsRegexp(t *testing.T) {
	t.Parallel()
	for _, c := range saysAlreadyCases {
		hint := "default: " + c.def
		if got, want := saysAlready(c.desc, hint), saysAlreadyRegexp(c.desc, hint); got != want {
			t.Errorf("saysAlready(%q, %q) = %v, the regular expression says %v", c.desc, hint, got, want)
		}
	}
}

// FuzzSaysAlready compares the string search with the regular expression
// on any description and default.
func FuzzSaysAlready(f *testing.F) {
	for _, c := range saysAlreadyCases {
		f.Add(c.desc, c.def)
	}
	f.Fuzz(func(t *testing.T, desc, def string) {
		hint := "default: " + def
		if got, want := saysAlready(desc, hint), saysAlreadyRegexp(desc, hint); got != want {
			t.Errorf("saysAlready(%q, %q) = %v, the regular expression says %v", desc, hint, got, want)
		}
	})
}

// TestDescribeSkipsWhatNoRuleDescribes: describeKeywords skips its rules
// when no keyword being removed may be described (mayDescribe); for every
// such keyword, whatever its value, the rules would indeed describe
// nothing. Every keyword the rules describe is one mayDescribe names.
func TestDescribeSkipsWhatNoRuleDescribes(t *testing.T) {
	c := newCompiler()
	c.d = Gemini
	values := []any{nil, true, false, 3.0, "x", []any{"a", 1.0}, map[string]any{"type": "string"}, map[string]any{}}
	keys := append(slices.Clone(indexedKeywords), "x-extra", "$vocabulary", "discriminator", "const", "nullable")
	for _, k := range keys {
		for _, v := range values {
			m := map[string]any{k: v, "type": "object", "properties": map[string]any{"a": map[string]any{}}}
			hints, described := c.describeRules(m, []string{k}, 0, nil)
			if !mayDescribe(k) && (len(hints) > 0 || len(described) > 0) {
				t.Errorf("%s: %v is described %q, but mayDescribe says no rule describes it", k, v, hints)
			}
			fast, fastDescribed := c.describeKeywords(m, []string{k}, 0, nil)
			if !slices.Equal(fast, hints) || !slices.Equal(fastDescribed, described) {
				t.Errorf("%s: %v: describeKeywords gave %q %q, the rules %q %q", k, v, fast, fastDescribed, hints, described)
			}
		}
	}
}
