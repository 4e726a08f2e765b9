package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/toolbelt/toolbelt/internal/readability"
	"github.com/toolbelt/toolbelt/internal/readability/render"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// The extract modes.
const (
	ModeMarkdown = "markdown"
	ModeText     = "text"
)

// extracted is the readable content of a page.
type extracted struct {
	Title string
	Text  string
	// Extractor says how: "readability", or "main-text" when no article was
	// found and the page's main text was taken instead.
	Extractor string
}

// maxReadabilityElements is the most elements a page may have for
// readability and html-to-markdown to read it: their time grows faster than
// the page (2 s for a 2 MB article of 80,000 elements), so a larger page
// goes through fastRender, which is linear.
const maxReadabilityElements = 10_000

// countElements counts the element nodes under n.
func countElements(n *html.Node) int {
	c := 0
	if n.Type == html.ElementNode {
		c++
	}
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c += countElements(k)
	}
	return c
}

// minArticleChars is the least text an article must have for readability's
// result to be used; below it the page's main text is taken.
const minArticleChars = 200

// extractHTML returns the readable content of an HTML page (UTF-8) as
// Markdown or plain text: the article readability finds, else the main text
// of the page without scripts, styles, navigation and forms. The page is
// parsed once.
func extractHTML(page []byte, pageURL *url.URL, mode string) (extracted, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return extracted{}, err
	}
	title := documentTitle(doc)
	if countElements(doc) > maxReadabilityElements {
		// Too large for readability: its cleaning alone (see
		// readability.StripUnlikely), then the linear converter.
		body := mainNode(doc)
		readability.StripUnlikely(body)
		return extracted{Title: title, Text: fastRender(body, pageURL, mode), Extractor: "fast-main-text"}, nil
	}
	// readability changes the tree it reads: the main text, if it finds no
	// article, comes from a copy taken before.
	page0 := cloneTree(doc)
	article, err := readArticle(doc, pageURL)
	if err == nil && article.Node != nil && len(strings.TrimSpace(render.InnerText(article.Node))) >= minArticleChars {
		out, err := render_(article.Node, pageURL, mode)
		if err != nil {
			return extracted{}, err
		}
		if t := strings.TrimSpace(article.Title()); t != "" {
			title = t
		}
		return extracted{Title: title, Text: out, Extractor: "readability"}, nil
	}
	body := mainNode(page0)
	stripClutter(body)
	out, err := render_(body, pageURL, mode)
	if err != nil {
		return extracted{}, err
	}
	return extracted{Title: title, Text: out, Extractor: "main-text"}, nil
}

// cloneTree returns a deep copy of the tree under n.
func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace, Attr: slices.Clone(n.Attr)}
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c.AppendChild(cloneTree(k))
	}
	return c
}

// readArticle runs readability; a panic in it counts as finding no article.
func readArticle(doc *html.Node, pageURL *url.URL) (a readability.Article, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = readability.Article{}, fmt.Errorf("readability failed: %v", p)
		}
	}()
	p := readability.NewParser()
	p.DisableJSONLD = true
	return p.ParseAndMutate(doc, pageURL)
}

// render_ turns a node into Markdown or text.
func render_(n *html.Node, pageURL *url.URL, mode string) (string, error) {
	if mode == ModeText {
		return tidyText(render.InnerText(n)), nil
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	var opts []converter.ConvertOptionFunc
	if pageURL != nil {
		opts = append(opts, converter.WithDomain(pageURL.Scheme+"://"+pageURL.Host))
	}
	md, err := conv.ConvertNode(n, opts...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(md)), nil
}

// tidyText trims lines' trailing space and keeps at most one blank line in
// a row, in one pass.
func tidyText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	blank := 0
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, " \t\r\n")
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
			if blank > 0 {
				b.WriteString("\n")
			}
		}
		blank = 0
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}

func documentTitle(doc *html.Node) string {
	var title string
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			title = strings.Join(strings.Fields(render.InnerText(n)), " ")
			return true
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(doc)
	return title
}

// mainNode returns the <main> element, else the first <article>, else the
// <body>, else the document.
func mainNode(doc *html.Node) *html.Node {
	var main, article, body *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case n.DataAtom == atom.Main && main == nil:
				main = n
			case n.DataAtom == atom.Article && article == nil:
				article = n
			case n.DataAtom == atom.Body && body == nil:
				body = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, n := range []*html.Node{main, article, body} {
		if n != nil {
			return n
		}
	}
	return doc
}

// clutter are the elements left out of a page's main text.
var clutter = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Iframe: true,
	atom.Svg: true, atom.Canvas: true, atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Object: true, atom.Embed: true,
}

func stripClutter(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.CommentNode || c.Type == html.ElementNode && (clutter[c.DataAtom] || hidden(c)) {
			n.RemoveChild(c)
		} else {
			stripClutter(c)
		}
		c = next
	}
}

// hidden reports elements marked hidden or aria-hidden.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch {
		case a.Key == "hidden", a.Key == "aria-hidden" && a.Val == "true":
			return true
		case a.Key == "style" && strings.Contains(strings.ReplaceAll(strings.ToLower(a.Val), " ", ""), "display:none"):
			return true
		}
	}
	return false
}

// toUTF8 decodes body to UTF-8 by the charset the Content-Type header, a
// byte order mark or a <meta> tag declares (HTML), defaulting to UTF-8 for
// other text. It returns the charset name used.
func toUTF8(body []byte, contentType string, isHTML bool) ([]byte, string) {
	if !isHTML && !strings.Contains(strings.ToLower(contentType), "charset=") && !hasBOM(body) {
		return body, "utf-8"
	}
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || name == "" {
		return body, "utf-8"
	}
	out, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(body)))
	if err != nil {
		return body, "utf-8"
	}
	return out, name
}

func hasBOM(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}) || bytes.HasPrefix(b, []byte{0xfe, 0xff}) || bytes.HasPrefix(b, []byte{0xff, 0xfe})
}

// prettyJSON indents a JSON document; ok is false when body is not JSON.
func prettyJSON(body []byte) (string, bool) {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimPrefix(body, []byte{0xef, 0xbb, 0xbf}), "", "  "); err != nil {
		return "", false
	}
	return b.String(), true
}
