package web

import (
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// fastRender turns a node into Markdown (or plain text) in one linear pass.
// It serves pages too large for readability and html-to-markdown, whose
// time grows faster than the page: it knows headings, paragraphs, lists,
// links, emphasis, code, quotes and tables, and writes the text of
// everything else.
func fastRender(n *html.Node, base *url.URL, mode string) string {
	w := &mdWriter{base: base, text: mode == ModeText}
	// The output is about the text with some markup: growing the buffer
	// to it once spares copying it over and over as it doubles.
	w.b.Grow(textBytes(n) * 9 / 8)
	w.children(n)
	return tidyText(w.b.String())
}

// textBytes is the size of the text under n.
func textBytes(n *html.Node) int {
	if n.Type == html.TextNode {
		return len(n.Data)
	}
	size := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		size += textBytes(c)
	}
	return size
}

type mdWriter struct {
	b     strings.Builder
	base  *url.URL
	text  bool
	pre   int // inside <pre>
	lists []int
}

// space writes one space unless the output already ends in white space.
func (w *mdWriter) space() {
	if s := w.b.String(); s != "" {
		if c := s[len(s)-1]; c != ' ' && c != '\n' {
			w.b.WriteByte(' ')
		}
	}
}

// block starts a new block: a blank line, unless one is there already.
func (w *mdWriter) block() {
	s := w.b.String()
	switch {
	case s == "" || strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		w.b.WriteByte('\n')
	default:
		w.b.WriteString("\n\n")
	}
}

func (w *mdWriter) line() {
	if s := w.b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		w.b.WriteByte('\n')
	}
}

func (w *mdWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

// sub renders n's children alone and returns the text.
func (w *mdWriter) sub(n *html.Node) string {
	inner := &mdWriter{base: w.base, text: w.text, pre: w.pre, lists: w.lists}
	inner.children(n)
	return strings.TrimSpace(inner.b.String())
}

func (w *mdWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.textNode(n.Data)
		return
	case html.ElementNode:
	default:
		return
	}
	if clutter[n.DataAtom] || hidden(n) {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.block()
		if !w.text {
			w.b.WriteString(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		}
		w.b.WriteString(oneLine(w.sub(n)))
		w.block()
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Dl, atom.Figure, atom.Figcaption, atom.Details, atom.Summary:
		w.block()
		w.children(n)
		w.block()
	case atom.Dt, atom.Dd:
		w.line()
		w.children(n)
		w.line()
	case atom.Br:
		w.b.WriteByte('\n')
	case atom.Hr:
		w.block()
		if !w.text {
			w.b.WriteString("---")
		}
		w.block()
	case atom.Pre:
		w.block()
		w.pre++
		code := strings.Trim(w.sub(n), "\n")
		w.pre--
		if w.text {
			w.b.WriteString(code)
		} else {
			w.b.WriteString("```\n" + code + "\n```")
		}
		w.block()
	case atom.Code, atom.Kbd, atom.Samp:
		if w.pre > 0 || w.text {
			w.children(n)
			return
		}
		w.b.WriteString("`" + oneLine(w.sub(n)) + "`")
	case atom.Em, atom.I:
		w.wrapInline(n, "*")
	case atom.Strong, atom.B:
		w.wrapInline(n, "**")
	case atom.A:
		w.link(n)
	case atom.Img:
		if alt := attr(n, "alt"); alt != "" && !w.text {
			w.b.WriteString("![" + oneLine(alt) + "](" + w.abs(attr(n, "src")) + ")")
		}
	case atom.Ul, atom.Ol:
		w.block()
		w.lists = append(w.lists, map[bool]int{true: 1, false: 0}[n.DataAtom == atom.Ol])
		w.children(n)
		w.lists = w.lists[:len(w.lists)-1]
		w.block()
	case atom.Li:
		w.item(n)
	case atom.Blockquote:
		w.block()
		body := w.sub(n)
		if !w.text {
			body = "> " + strings.ReplaceAll(body, "\n", "\n> ")
		}
		w.b.WriteString(body)
		w.block()
	case atom.Table:
		w.table(n)
	default:
		w.children(n)
	}
}

func (w *mdWriter) textNode(s string) {
	if w.pre > 0 {
		w.b.WriteString(s)
		return
	}
	if strings.TrimSpace(s) == "" {
		if s != "" {
			w.space()
		}
		return
	}
	// Runs of white space become one space, without allocating.
	start := -1
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			if start >= 0 {
				w.b.WriteString(s[start:i])
				start = -1
			}
			w.space()
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		w.b.WriteString(s[start:])
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func (w *mdWriter) wrapInline(n *html.Node, mark string) {
	inner := oneLine(w.sub(n))
	if inner == "" {
		return
	}
	if w.text {
		w.b.WriteString(inner)
		return
	}
	w.b.WriteString(mark + inner + mark)
}

func (w *mdWriter) link(n *html.Node) {
	label := oneLine(w.sub(n))
	href := strings.TrimSpace(attr(n, "href"))
	if w.text || href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		w.b.WriteString(label)
		return
	}
	if label == "" {
		return
	}
	w.b.WriteString("[" + label + "](" + w.abs(href) + ")")
}

func (w *mdWriter) item(n *html.Node) {
	w.line()
	depth := max(len(w.lists)-1, 0)
	marker := "- "
	if len(w.lists) > 0 && w.lists[len(w.lists)-1] > 0 {
		marker = strconv.Itoa(w.lists[len(w.lists)-1]) + ". "
		w.lists[len(w.lists)-1]++
	}
	indent := strings.Repeat("  ", depth)
	body := w.sub(n)
	body = strings.ReplaceAll(body, "\n\n", "\n")
	body = strings.ReplaceAll(body, "\n", "\n"+indent+strings.Repeat(" ", len(marker)))
	w.b.WriteString(indent + marker + body)
	w.line()
}

func (w *mdWriter) table(n *html.Node) {
	w.block()
	rows := 0
	var walk func(*html.Node)
	walk = func(t *html.Node) {
		for c := t.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if c.DataAtom != atom.Tr {
				walk(c) // thead, tbody, tfoot
				continue
			}
			var cells []string
			for td := c.FirstChild; td != nil; td = td.NextSibling {
				if td.Type == html.ElementNode && (td.DataAtom == atom.Td || td.DataAtom == atom.Th) {
					cells = append(cells, strings.ReplaceAll(oneLine(w.sub(td)), "|", `\|`))
				}
			}
			if len(cells) == 0 {
				continue
			}
			if w.text {
				w.b.WriteString(strings.Join(cells, "\t") + "\n")
				continue
			}
			w.b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
			if rows == 0 {
				w.b.WriteString("|" + strings.Repeat(" --- |", len(cells)) + "\n")
			}
			rows++
		}
	}
	walk(n)
	w.block()
}

func (w *mdWriter) abs(ref string) string {
	if w.base == nil {
		return ref
	}
	u, err := w.base.Parse(ref)
	if err != nil {
		return ref
	}
	return u.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
