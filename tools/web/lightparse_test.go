package web

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestLightParseRendersLikeParse: the main text fastRender writes from
// lightParse's tree is the one it writes from html.Parse's, and the title
// is the same, on the saved pages, the generated article and pages that
// leave out the end tags HTML allows to leave out.
func TestLightParseRendersLikeParse(t *testing.T) {
	pages := map[string][]byte{"article 256 KB": articlePage(256 << 10)}
	for _, name := range []string{"article.html", "docs.html", "ads.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = b
	}
	pages["omitted end tags"] = []byte(`<!DOCTYPE html><title>Omitted</title><body><main>
<p>First paragraph<p>Second paragraph<div>a block</div>
<ul><li>one<li>two<ul><li>two a<li>two b</ul><li>three</ul>
<ol><li>first<li>second</ol>
<dl><dt>term<dd>definition<dt>other<dd>more</dl>
<table><thead><tr><th>h1<th>h2<tbody><tr><td>a<td>b<tr><td>c<td>d</table>
<p>A <a href="/x?a=1&amp;b=2">link &amp; more</a>, <b>bold</b>, <code>code</code><br>next line
<pre>  keep
    this</pre><img src=/i.png alt="an image"><hr>
<h2>Heading <em>with</em> emphasis</h2><blockquote>quoted</blockquote>
<p hidden>hidden text<div>shown after a hidden p left open</div><script>var x = "<p>not text</p>";</script><style>p{}</style>
<select><option>a<option>b</select>
</main>`)
	u, _ := url.Parse("https://example.com/a/b")
	for name, page := range pages {
		full, err := html.Parse(bytes.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		light := lightParse(page)
		for _, mode := range []string{ModeMarkdown, ModeText} {
			want, got := fastRender(mainNode(full), u, mode), fastRender(mainNode(light), u, mode)
			if got != want {
				t.Errorf("%s, %s:\nlight tree:\n%s\nhtml.Parse:\n%s", name, mode, got, want)
			}
		}
		if got, want := documentTitle(light), documentTitle(full); got != want {
			t.Errorf("%s: title %q, want %q", name, got, want)
		}
	}
	if got := fastRender(mainNode(lightParse(pages["omitted end tags"])), u, ModeMarkdown); !strings.Contains(got, "- two a") || !strings.Contains(got, "shown after a hidden p") || strings.Contains(got, "not text") || strings.Contains(got, "hidden text") {
		t.Errorf("omitted end tags:\n%s", got)
	}
}

// TestLightParseBoundsTheDepth: a page that nests a hundred thousand
// elements gives a tree no deeper than maxLightDepth, and its text is kept.
func TestLightParseBoundsTheDepth(t *testing.T) {
	page := strings.Repeat("<div>", 100_000) + "deep text" + strings.Repeat("</div>", 100_000)
	doc := lightParse([]byte(page))
	depth := 0
	for n := doc; n.LastChild != nil; n = n.LastChild {
		depth++
	}
	if depth > maxLightDepth+2 {
		t.Errorf("depth %d", depth)
	}
	u, _ := url.Parse("https://example.com/")
	if got := fastRender(mainNode(doc), u, ModeText); got != "deep text" {
		t.Errorf("rendered %q", got)
	}
}

// FuzzLightParse: any bytes make a tree, without a panic, whose rendering
// is valid UTF-8 when the input is.
func FuzzLightParse(f *testing.F) {
	f.Add([]byte("<table><tr><td><pre><a href=javascript:x><ul><li><blockquote>"))
	f.Add([]byte("</p></li><li><td></table><p><b><i></b></i>"))
	u, _ := url.Parse("https://example.com/")
	f.Fuzz(func(t *testing.T, page []byte) {
		fastRender(mainNode(lightParse(page)), u, ModeMarkdown)
	})
}
