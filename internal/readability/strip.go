package readability

import (
	"github.com/go-shiori/dom"
	"github.com/toolbelt/toolbelt/internal/readability/internal/re2go"
	"golang.org/x/net/html"
)

// StripUnlikely removes from the tree under n, in one linear pass, what
// readability's article search removes first (its "strip unlikely
// candidates" step): elements whose class and id name boilerplate
// (comments, sidebars, banners, footers, sponsors, social links, … and
// not also a likely part of an article), unless a table or code holds them
// within three levels, and elements whose role is a menu, navigation,
// complementary content, an alert or a dialog. It is for a page too large
// for the whole of readability, whose time grows faster than the page.
// (Toolbelt's addition to this copy: see PATCHES.md.)
func StripUnlikely(n *html.Node) {
	var ps Parser
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && unlikely(&ps, c) {
			n.RemoveChild(c)
		} else {
			StripUnlikely(c)
		}
		c = next
	}
}

func unlikely(ps *Parser, n *html.Node) bool {
	if _, ok := unlikelyRoles[dom.GetAttribute(n, "role")]; ok {
		return true
	}
	tag := dom.TagName(n)
	if tag == "body" || tag == "a" {
		return false
	}
	match := dom.ClassName(n) + " " + dom.ID(n)
	return re2go.IsUnlikelyCandidates(match) && !re2go.MaybeItsACandidate(match) &&
		!ps.hasAncestorTag(n, "table", 3, nil) && !ps.hasAncestorTag(n, "code", 3, nil)
}
