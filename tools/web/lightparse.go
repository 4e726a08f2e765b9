package web

import (
	"bytes"
	"slices"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// lightParse builds the tree of an HTML page straight from the tokenizer's
// stream: elements nest as their tags say, void elements and self-closed
// tags take no children, an end tag closes the elements opened after its
// start (one with no open start is ignored), and the end tags HTML lets a
// page leave out (of p, li, dt, dd, tr, td, th, option and table
// sections) are supplied. It does none of html.Parse's error recovery
// (foster parenting, the adoption agency, implied html, head and body),
// which is three times the cost of the tokenizer: a page too large for
// readability gets its main text from this tree. On well-formed pages the
// two trees render alike (TestLightParseRendersLikeParse).
func lightParse(page []byte) *html.Node {
	doc := &html.Node{Type: html.DocumentNode}
	open := []*html.Node{doc}
	// opened counts the open elements by name, so that an end tag or an
	// implied end with nothing of its name open costs no walk of open.
	opened := map[string]int{}
	top := func() *html.Node { return open[len(open)-1] }
	popTo := func(i int) {
		for _, n := range open[i:] {
			opened[n.Data]--
		}
		open = open[:i]
	}
	// closeTo pops the open elements down to and including the innermost
	// one of names, if it is open above any of stops.
	closeTo := func(names, stops []atom.Atom) {
		if !slices.ContainsFunc(names, func(a atom.Atom) bool { return opened[a.String()] > 0 }) {
			return
		}
		for i := len(open) - 1; i > 0; i-- {
			a := open[i].DataAtom
			if slices.Contains(names, a) {
				popTo(i)
				return
			}
			if slices.Contains(stops, a) {
				return
			}
		}
	}
	// Nodes come from slabs: one allocation for many nodes, which the
	// tree keeps alive together anyway.
	var slab []html.Node
	node := func(t html.NodeType, data string) *html.Node {
		if len(slab) == cap(slab) {
			slab = make([]html.Node, 0, 256)
		}
		slab = slab[:len(slab)+1]
		n := &slab[len(slab)-1]
		n.Type, n.Data = t, data
		return n
	}
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return doc
		case html.TextToken:
			top().AppendChild(node(html.TextNode, string(z.Text())))
		case html.CommentToken:
			top().AppendChild(node(html.CommentNode, string(z.Text())))
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			data := a.String() // no copy for a known element
			if a == 0 {
				data = string(name)
			}
			n := node(html.ElementNode, data)
			n.DataAtom = a
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				n.Attr = append(n.Attr, html.Attribute{Key: string(k), Val: string(v)})
			}
			if rule, ok := impliedEnds[n.DataAtom]; ok {
				closeTo(rule.closes, rule.stops)
			}
			if closesP[n.DataAtom] {
				closeTo([]atom.Atom{atom.P}, pScope)
			}
			top().AppendChild(n)
			if tt == html.StartTagToken && !voidElements[n.DataAtom] && len(open) <= maxLightDepth {
				open = append(open, n)
				opened[n.Data]++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if opened[string(name)] == 0 {
				break // nothing of that name is open
			}
			for i := len(open) - 1; i > 0; i-- {
				if open[i].Data == string(name) {
					popTo(i)
					break
				}
			}
		}
	}
}

// maxLightDepth bounds the nesting of lightParse's tree: deeper elements
// are kept, empty, and what they hold goes to the element at that depth, so
// that the walks over the tree (all recursive) stay shallow and no tag
// looks through more open elements than that, whatever a page nests.
const maxLightDepth = 128

// impliedEnds are the start tags that close an open element of the same
// family, as far as its container: a new li closes the open li of its list.
var impliedEnds = map[atom.Atom]struct{ closes, stops []atom.Atom }{
	atom.Li:     {[]atom.Atom{atom.Li}, []atom.Atom{atom.Ul, atom.Ol, atom.Menu}},
	atom.Dt:     {[]atom.Atom{atom.Dt, atom.Dd}, []atom.Atom{atom.Dl}},
	atom.Dd:     {[]atom.Atom{atom.Dt, atom.Dd}, []atom.Atom{atom.Dl}},
	atom.Tr:     {[]atom.Atom{atom.Tr}, []atom.Atom{atom.Table, atom.Thead, atom.Tbody, atom.Tfoot}},
	atom.Td:     {[]atom.Atom{atom.Td, atom.Th}, []atom.Atom{atom.Tr, atom.Table}},
	atom.Th:     {[]atom.Atom{atom.Td, atom.Th}, []atom.Atom{atom.Tr, atom.Table}},
	atom.Thead:  {[]atom.Atom{atom.Thead, atom.Tbody, atom.Tfoot}, []atom.Atom{atom.Table}},
	atom.Tbody:  {[]atom.Atom{atom.Thead, atom.Tbody, atom.Tfoot}, []atom.Atom{atom.Table}},
	atom.Tfoot:  {[]atom.Atom{atom.Thead, atom.Tbody, atom.Tfoot}, []atom.Atom{atom.Table}},
	atom.Option: {[]atom.Atom{atom.Option}, []atom.Atom{atom.Select, atom.Datalist}},
}

// closesP are the start tags that close an open p (HTML's "close a p
// element in button scope").
var closesP = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Details: true,
	atom.Div: true, atom.Dl: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Header: true, atom.Hr: true, atom.Main: true, atom.Menu: true,
	atom.Nav: true, atom.Ol: true, atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true,
	atom.Table: true, atom.Ul: true,
}

// pScope are the elements a p cannot be closed across.
var pScope = []atom.Atom{atom.Button, atom.Table, atom.Td, atom.Th, atom.Caption, atom.Html, atom.Object, atom.Template}

// voidElements take no children and have no end tag.
var voidElements = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true, atom.Hr: true,
	atom.Img: true, atom.Input: true, atom.Link: true, atom.Meta: true, atom.Param: true, atom.Source: true,
	atom.Track: true, atom.Wbr: true,
}
