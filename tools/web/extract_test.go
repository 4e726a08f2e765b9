package web

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// articlePage is an article of n bytes or more: sections of a heading, a
// paragraph with a link and emphasis, and a list.
func articlePage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>The Long Archive</title></head><body><nav><a href=\"/\">Home</a></nav><article><h1>The Long Archive</h1>\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2>\n<p>Paragraph %d of the archive describes the harbour, the boats that came in that season, "+
			"the weather on the crossing and the prices at the market, with <a href=\"/s/%d\">a link</a> and <em>some emphasis</em>.</p>\n"+
			"<ul><li>first point of section %d</li><li>second point</li></ul>\n", i, i, i, i)
	}
	b.WriteString("</article><footer>end</footer></body></html>")
	return b.Bytes()
}

// commentedPage is a news article of n bytes or more as such pages come:
// a header, navigation, an ad label, the article's sections, a sidebar of
// related links, then a thread of comments (most of the page), and a
// footer. Its key sentences are "Section N ends here." for each section.
func commentedPage(n int) (page []byte, sections int) {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Harbour report | The Coast Times</title></head><body>
<header class="site-header"><a href="/">The Coast Times</a><ul class="menu"><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li></ul></header>
<div class="banner-ad"><span>ADVERTISEMENT</span></div>
<main><article class="post"><h1>Harbour report</h1><p class="byline">By A. Writer</p>
`)
	for sections = 0; sections < 40; sections++ {
		fmt.Fprintf(&b, "<h2>Part %d</h2>\n<p>The harbour master counted the boats that came in during week %d, and the fish market's prices rose with the weather on the crossing. "+
			"Section %d ends here.</p>\n", sections, sections, sections)
	}
	b.WriteString(`</article>
<div class="sidebar related"><h3>Related</h3><ul><li><a href="/r/1">RELATED-LINK one</a></li><li><a href="/r/2">RELATED-LINK two</a></li></ul></div>
<section id="comments" class="comments-area"><h2>1,300 comments</h2><ol class="comment-list">
`)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<li id="comment-%d" class="comment"><div class="comment-author"><img src="/a/%d.png" alt=""><b>reader%d</b></div>`+
			`<div class="comment-body"><p>COMMENT-TEXT %d: I have sailed from that harbour for years and the prices were always like this in spring, nothing new.</p></div>`+
			`<div class="reply"><a href="#reply-%d">Reply</a></div></li>`+"\n", i, i, i, i, i)
	}
	b.WriteString(`</ol></section></main><footer class="site-footer">FOOTER-TEXT All rights reserved.</footer></body></html>`)
	return b.Bytes(), sections
}

func parseFile(t *testing.T, name string) *html.Node {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestFastRender checks the linear converter huge pages go through.
func TestFastRender(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://coastalnotes.example/posts/tide")
	for _, tc := range []struct {
		file, mode   string
		want, absent []string
	}{
		{"article.html", ModeMarkdown, []string{
			"# How Tide Pools Survive the Winter\n\nBy Mara Ellison",
			"## Shelter in the cracks\n\nPurple shore crabs and hermit crabs retreat into the deepest cracks, where the rock holds the day's warmth and the water stays",
			"> The pool is not empty in winter; it is simply holding its breath.",
			"| Week | Mean water temp (°C) | Anemones | Crabs |\n| --- | --- | --- | --- |\n| 1 | 9.8 | 41 | 17 |",
			"[raw data](https://coastalnotes.example/data/tidepools-2026.csv)",
			"- Winter counts undercount mobile species unless observers look under rocks.\n- Anemone cover",
		}, []string{"Coastal Notes</a>", "Popular posts", "All rights reserved", "Sign up"}},
		{"article.html", ModeText, []string{"Shelter in the cracks\n\nPurple shore crabs", "1\t9.8\t41\t17", "See the raw data for every pool."},
			[]string{"## ", "](", "| --- |"}},
		{"docs.html", ModeMarkdown, []string{"```\n[storage]\npath = \"/var/lib/lighthouse\"\ncompact_every = \"6h\"\n```", "`listen`", "Default `127.0.0.1:9000`."}, nil},
		{"ads.html", ModeMarkdown, []string{"1. Soften the onion", "4. Blend half the soup"}, []string{"TRACKING", "gtag", "SUBSCRIBE-POPUP", "loadAd", "ads.example-network.com/frame"}},
	} {
		got := fastRender(mainNode(parseFile(t, tc.file)), base, tc.mode)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s: missing %q in:\n%s", tc.file, tc.mode, w, got)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(got, a) {
				t.Errorf("%s %s: %q should be left out:\n%s", tc.file, tc.mode, a, got)
			}
		}
	}
}

func TestExtractHugePageIsFast(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("https://archive.example/long")
	x, err := extractHTML(articlePage(2<<20), u, ModeMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	if x.Extractor != "fast-main-text" || x.Title != "The Long Archive" {
		t.Errorf("extractor %q, title %q", x.Extractor, x.Title)
	}
	for _, w := range []string{"## Section 0\n\nParagraph 0 of the archive", "[a link](https://archive.example/s/7) and *some emphasis*.", "- first point of section 9\n- second point"} {
		if !strings.Contains(x.Text, w) {
			t.Errorf("missing %q", w)
		}
	}
	if strings.Contains(x.Text, "Home") {
		t.Error("the navigation is in the text")
	}
}

// BenchmarkExtractParts times the parts of extraction: parsing a 2 MB page
// (html.Parse), the linear converter
// over it, and readability with html-to-markdown over
// a 256 KB page (their time grows faster than the page, which is why larger
// pages skip them).
func BenchmarkExtractParts(b *testing.B) {
	big := articlePage(2 << 20)
	u, _ := url.Parse("https://archive.example/long")
	b.Run("parse-2MB", func(b *testing.B) {
		for b.Loop() {
			if _, err := html.Parse(bytes.NewReader(big)); err != nil {
				b.Fatal(err)
			}
		}
	})
	doc, _ := html.Parse(bytes.NewReader(big))
	b.Run("fastRender-2MB", func(b *testing.B) {
		for b.Loop() {
			fastRender(mainNode(doc), u, ModeMarkdown)
		}
	})
	small := articlePage(256 << 10)
	b.Run("readability+markdown-256KB", func(b *testing.B) {
		for b.Loop() {
			if x, err := extractHTML(small, u, ModeMarkdown); err != nil || x.Extractor != "readability" {
				b.Fatal(err, x.Extractor)
			}
		}
	})
}

// TestBigPagesLoseBoilerplate: a page too large for readability keeps its
// article's every key sentence and loses the comment thread, the ad label,
// the related links and the footer, as readability would.
func TestBigPagesLoseBoilerplate(t *testing.T) {
	t.Parallel()
	page, sections := commentedPage(2 << 20)
	u, _ := url.Parse("https://news.example/harbour")
	for _, mode := range []string{ModeMarkdown, ModeText} {
		x, err := extractHTML(page, u, mode)
		if err != nil || x.Extractor != "fast-main-text" {
			t.Fatalf("%s: %v %q", mode, err, x.Extractor)
		}
		for i := range sections {
			if s := fmt.Sprintf("Section %d ends here.", i); !strings.Contains(x.Text, s) {
				t.Errorf("%s: %q lost", mode, s)
			}
		}
		for _, s := range []string{"COMMENT-TEXT", "ADVERTISEMENT", "RELATED-LINK", "FOOTER-TEXT", "Reply"} {
			if strings.Contains(x.Text, s) {
				t.Errorf("%s: %q kept", mode, s)
			}
		}
		if x.Title != "Harbour report | The Coast Times" {
			t.Errorf("%s: title %q", mode, x.Title)
		}
	}
}

// BenchmarkExtractCommented2MB extracts the commented page of 2 MB
// (commentedPage) and reports the size of the text kept.
func BenchmarkExtractCommented2MB(b *testing.B) {
	page, _ := commentedPage(2 << 20)
	u, _ := url.Parse("https://news.example/harbour")
	var x extracted
	for b.Loop() {
		x, _ = extractHTML(page, u, ModeMarkdown)
	}
	b.ReportMetric(float64(len(x.Text)), "text-bytes")
}

// FuzzExtract feeds arbitrary bytes through the HTML paths: no panic, and
// the text is valid UTF-8.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"article.html", "docs.html", "ads.html", "latin1.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("<table><tr><td><pre><a href=javascript:x><ul><li><blockquote>"))
	u, _ := url.Parse("https://example.com/a/b")
	f.Fuzz(func(t *testing.T, page []byte) {
		for _, mode := range []string{ModeMarkdown, ModeText} {
			utf, _ := toUTF8(page, "text/html", true)
			x, err := extractHTML(utf, u, mode)
			if err != nil {
				return
			}
			if doc, err := html.Parse(bytes.NewReader(utf)); err == nil {
				_ = fastRender(mainNode(doc), u, mode)
			}
			if !utf8.ValidString(x.Text) && utf8.Valid(utf) {
				t.Errorf("invalid UTF-8 from valid input")
			}
		}
	})
}
