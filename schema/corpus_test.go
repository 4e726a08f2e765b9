package schema

import (
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
)

// testDialects are the dialects every schema is compiled to in the tests.
func testDialects() []Dialect {
	return append(Dialects(), Compat("minLength", "maxLength", "pattern", "format"))
}

// checkCompiled asserts what must hold of any compilation: the provider's
// checker finds nothing (for strict mode: nothing beyond what the report
// says cannot be strict), no property is lost without the report saying
// why, compiling again changes nothing, and the input is untouched.
func checkCompiled(t *testing.T, d Dialect, doc any) {
	t.Helper()
	before := encode(t, doc)
	out, rep := d.Compile(doc)
	if after := encode(t, doc); after != before {
		t.Fatalf("Compile modified its input:\nbefore %s\nafter  %s", before, after)
	}
	if problems := checkProvider(d.Name(), out); len(problems) > 0 {
		if !d.Strict() || rep.Strict() {
			t.Errorf("%s would reject the compiled schema:\n  %s\ncompiled: %s", d.Name(), strings.Join(problems, "\n  "), textclip.Clip(encode(t, out), 600))
		} else {
			for _, p := range problems {
				if !underNotStrict(p, rep) {
					t.Errorf("strict problem not explained by the report's notStrict %v: %s", rep.NotStrict, p)
				}
			}
		}
	}
	if lost := lostProperties(doc, out, rep); len(lost) > 0 {
		t.Errorf("%s lost properties without saying why:\n  %s\nreport:\n%s", d.Name(), strings.Join(lost, "\n  "), textclip.Clip(rep.String(), 2000))
	}
	again, rep2 := d.Compile(out)
	if a, b := encode(t, again), encode(t, out); a != b {
		t.Errorf("%s: compiling the compiled schema changed it:\nfirst  %s\nsecond %s", d.Name(), textclip.Clip(b, 600), textclip.Clip(a, 600))
	}
	if len(rep2.Changes) > 0 {
		t.Errorf("%s: compiling the compiled schema reported changes:\n%s", d.Name(), textclip.Clip(rep2.String(), 1000))
	}
}

// underNotStrict reports whether a checker problem lies at or below a path
// the report says cannot be strict.
func underNotStrict(problem string, rep Report) bool {
	path, _, _ := strings.Cut(problem, ": ")
	if path == "(root)" {
		path = ""
	}
	for _, c := range rep.NotStrict {
		if c.Path == "" || path == c.Path || strings.HasPrefix(path, c.Path+".") || strings.HasPrefix(path, c.Path+"[") {
			return true
		}
	}
	return false
}

func TestCorpusCompilesForEveryDialect(t *testing.T) {
	t.Parallel()
	tools := loadCorpus(t)
	for _, tl := range tools {
		for _, d := range testDialects() {
			t.Run(tl.Server+"/"+tl.Name+"/"+d.Name(), func(t *testing.T) {
				t.Parallel()
				checkCompiled(t, d, tl.Doc)
			})
		}
	}
}

// TestCorpusCheckersCatchTheRawSchemas shows the checkers are not
// toothless: the corpus as published breaks Gemini and strict mode.
func TestCorpusCheckersCatchTheRawSchemas(t *testing.T) {
	t.Parallel()
	tools := loadCorpus(t)
	rejected := map[string]int{}
	for _, tl := range tools {
		for _, p := range []string{"gemini", "openai-strict", "xai"} {
			if len(checkProvider(p, tl.Doc)) > 0 {
				rejected[p]++
			}
		}
	}
	for _, p := range []string{"gemini", "openai-strict", "xai"} {
		if rejected[p] == 0 {
			t.Errorf("the %s checker accepts every raw corpus schema; it cannot be checking anything", p)
		}
	}
	t.Logf("raw corpus schemas rejected (of %d): %v", len(tools), rejected)
}

// TestCorpusLintMatchesChecker: a raw schema the checker rejects has lint
// problems, and one without lint problems passes the checker.
func TestCorpusLintMatchesChecker(t *testing.T) {
	t.Parallel()
	tools := loadCorpus(t)
	for _, tl := range tools {
		for _, d := range []Dialect{Gemini, OpenAIStrict, XAI, OpenAI} {
			problems := d.Lint(tl.Doc)
			rejected := checkProvider(d.Name(), tl.Doc)
			if len(rejected) > 0 && len(problems) == 0 {
				t.Errorf("%s/%s: %s rejects the raw schema (%s) but lint finds nothing", tl.Server, tl.Name, d.Name(), rejected[0])
			}
		}
	}
}
