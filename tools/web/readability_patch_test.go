package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/readability"
	"golang.org/x/net/html"
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

// TestStripUnlikelyLabelsAndShares: the pass big pages get removes ad and
// loading labels and short share boxes, and keeps a heading that is only
// an ad word, a paragraph that merely starts with one, and a long box
// whose class says share.
func TestStripUnlikelyLabelsAndShares(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("The share of catches landed here rose again. ", 12)
	page := `<html><body><main><h2>Advertising</h2><p>Advertising revenue fell by a third.</p>` +
		`<div class="slot"><span> ADVERTISEMENT </span></div><p>Werbung</p><div>Loading…</div>` +
		`<ul class="share-buttons"><li>Share on X</li></ul><div id="share_box">Share this</div>` +
		`<div class="market-share">` + long + `</div></main></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	body := mainNode(doc)
	readability.StripUnlikely(body)
	got := fastRender(body, nil, ModeText)
	for _, want := range []string{"Advertising\n", "Advertising revenue fell", "The share of catches"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q was removed:\n%s", want, got)
		}
	}
	for _, gone := range []string{"ADVERTISEMENT", "Werbung", "Loading", "Share on X", "Share this"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q was kept:\n%s", gone, got)
		}
	}
}
