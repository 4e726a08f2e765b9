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

	"github.com/toolbelt/toolbelt/internal/webtest"
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

// mozillaTextBytes is the size of the text Mozilla's Readability (0.6.0,
// on jsdom 28.1.0) extracts from webtest.NewsPage, with 1,300 comments
// and with 60 (its textContent, the same on both): measured by bench/web.
const mozillaTextBytes = 2848

// TestNewsPageLosesBoilerplate: a news page, too large for readability
// (1,300 comments, over 10,000 elements) or not (60 comments), keeps its
// article's every key sentence and loses the comment thread, the ad
// labels, the share buttons, the sponsored and related links and the
// footer, as Mozilla's Readability does; its text is at most 1.5 times
// Mozilla's.
func TestNewsPageLosesBoilerplate(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("https://news.example/harbour")
	for _, tc := range []struct {
		comments  int
		extractor string
	}{{1300, "fast-main-text"}, {60, "readability"}} {
		page, keys := webtest.NewsPage(tc.comments)
		doc, err := html.Parse(bytes.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		if big := countElements(doc) > maxReadabilityElements; big != (tc.extractor == "fast-main-text") {
			t.Fatalf("%d comments: over %d elements is %v", tc.comments, maxReadabilityElements, big)
		}
		for _, mode := range []string{ModeMarkdown, ModeText} {
			x, err := extractHTML(page, u, mode)
			if err != nil || x.Extractor != tc.extractor {
				t.Fatalf("%d comments, %s: %v %q", tc.comments, mode, err, x.Extractor)
			}
			for _, k := range keys {
				if !strings.Contains(x.Text, k) {
					t.Errorf("%d comments, %s: %q lost", tc.comments, mode, k)
				}
			}
			for _, s := range webtest.Boilerplate {
				if strings.Contains(x.Text, s) {
					t.Errorf("%d comments, %s: %q kept", tc.comments, mode, s)
				}
			}
			if mode == ModeText && len(x.Text) > mozillaTextBytes*3/2 {
				t.Errorf("%d comments: %d bytes of text, more than 1.5 × Mozilla Readability's %d:\n%s", tc.comments, len(x.Text), mozillaTextBytes, x.Text)
			}
			if want := "Harbour fleet returns early as storms close the crossing"; !strings.HasPrefix(x.Title, want) {
				t.Errorf("%d comments, %s: title %q", tc.comments, mode, x.Title)
			}
		}
	}
}

// BenchmarkExtractCommented2MB extracts the news page with 1,300 comments
// (webtest.NewsPage, 2.1 MB) and reports the size of the text kept.
func BenchmarkExtractCommented2MB(b *testing.B) {
	page, _ := webtest.NewsPage(1300)
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
