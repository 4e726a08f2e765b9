package readability

import (
	"strings"
	"unicode/utf8"

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
// complementary content, an alert or a dialog. With them go two things
// readability removes when it prepares the article it found: share
// buttons (class or id "share", under 500 characters of text) and ad
// labels (an element, not a heading, whose only text is "Advertisement",
// "Ad", "Werbung", "Loading…" and the like). It is for a page too large
// for the whole of readability, whose time grows faster than the page.
// (Toolbelt's addition to this copy: see PATCHES.md.)
func StripUnlikely(n *html.Node) {
	var ps Parser
	ps.CharThresholds = NewParser().CharThresholds
	stripUnlikely(&ps, n)
}

func stripUnlikely(ps *Parser, n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && (unlikely(ps, c) || share(ps, c) || adLabel(c)) {
			n.RemoveChild(c)
		} else {
			stripUnlikely(ps, c)
		}
		c = next
	}
}

// share reports a share element as readability's prepArticle removes it.
func share(ps *Parser, n *html.Node) bool {
	match := dom.ClassName(n) + " " + dom.ID(n)
	return len(match) > 1 && rxShareElements.MatchString(match) && !textAtLeast(n, ps.CharThresholds)
}

// textAtLeast says whether the text under n has at least limit
// characters; it stops reading there.
func textAtLeast(n *html.Node, limit int) bool {
	count := 0
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.TextNode {
			count += utf8.RuneCountInString(n.Data)
			return count >= limit
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(n)
}

// maxAdLabel is more bytes than any of the ad or loading words has.
const maxAdLabel = 32

// adLabel reports an element holding nothing but one text that is an ad
// or loading label (readability's adWords and loadingWords, which its
// conditional cleaning removes), unless it is a heading.
func adLabel(n *html.Node) bool {
	c := n.FirstChild
	if c == nil || c.NextSibling != nil || c.Type != html.TextNode || len(c.Data) > 4*maxAdLabel {
		return false
	}
	switch dom.TagName(n) {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		return false
	}
	t := strings.TrimSpace(c.Data)
	return t != "" && len(t) <= maxAdLabel && (rxAdWords.MatchString(t) || rxLoadingWords.MatchString(t))
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
