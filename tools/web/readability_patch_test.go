package web

import (
	"net/url"
	"strings"
	"testing"
)

// TestReadabilityRegexps runs the parts of readability that its regular
// expressions decide (internal/readability compiles them on first use
// instead of at init; a wrong one would panic there, which readArticle
// turns into "no article"): the title's separator and hidden elements.
func TestReadabilityRegexps(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>The Long Story of the Harbour Town | Coastal Weekly</title></head><body><article>`)
	for i := range 8 {
		b.WriteString(`<p>The harbour town saw boats come in all season, and the market sold what they brought, paragraph ` + strings.Repeat("x", i) + ` by paragraph, at prices the fishermen argued about.</p>`)
	}
	b.WriteString(`<div style="display: none"><p>Hidden teaser text that no reader sees.</p></div>`)
	b.WriteString(`</article></body></html>`)
	u, _ := url.Parse("https://example.com/story")
	got, err := extractHTML([]byte(b.String()), u, ModeMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	if got.Extractor != "readability" {
		t.Fatalf("extractor %q, want readability", got.Extractor)
	}
	if got.Title != "The Long Story of the Harbour Town" {
		t.Errorf("title %q, want the site's name cut at the separator", got.Title)
	}
	if strings.Contains(got.Text, "Hidden teaser") {
		t.Errorf("a display:none element was kept:\n%s", got.Text)
	}
	if !strings.Contains(got.Text, "fishermen argued") {
		t.Errorf("the article's text is missing:\n%s", got.Text)
	}
}
