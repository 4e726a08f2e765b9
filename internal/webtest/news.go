// Package webtest makes the web pages the web tools' tests and the
// benchmark under bench/web read: a news article as such pages come, with
// its boilerplate and a long comment thread.
package webtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// NewsPage is a news article followed by a thread of comments comments
// (WordPress's markup, replies nested), as a page of a newspaper's site
// comes: a cookie dialog, a header and menu, share buttons, ad slots
// labelled "Advertisement" between the article's paragraphs, a newsletter
// form, "Sponsored" links, related stories and a footer. keys are the
// sentences of the article an extraction must keep, one per paragraph;
// none of the boilerplate's or the comments' text holds "KEY".
// 1,300 comments make a page of about 2 MB (over 30,000 elements); the
// page is the same for the same count.
func NewsPage(comments int) (page []byte, keys []string) {
	r := rand.New(rand.NewPCG(36, uint64(comments)))
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Harbour fleet returns early as storms close the crossing | The Coast Times</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="og:title" content="Harbour fleet returns early as storms close the crossing">
<meta property="og:type" content="article">
<link rel="stylesheet" href="/static/site.css">
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
<style>.ad-slot{min-height:250px}.comment-body p{margin:0 0 1em}</style>
</head>
<body class="post-template-default single single-post postid-4812 single-format-standard">
<div id="cookie-consent" class="cookie-banner" role="dialog" aria-label="Cookie consent"><p>We use cookies to improve your experience and to show you relevant advertising.</p><button class="btn accept">Accept all</button><button class="btn settings">Manage settings</button></div>
<header id="masthead" class="site-header"><div class="site-branding"><a href="/" rel="home" class="custom-logo-link"><img src="/static/logo.svg" alt="The Coast Times"></a></div>
<nav id="site-navigation" class="main-navigation" aria-label="Primary"><ul id="primary-menu" class="menu">
<li class="menu-item"><a href="/news/">News</a></li><li class="menu-item"><a href="/local/">Local</a></li><li class="menu-item"><a href="/business/">Business</a></li><li class="menu-item"><a href="/sport/">Sport</a></li><li class="menu-item"><a href="/opinion/">Opinion</a></li><li class="menu-item"><a href="/weather/">Weather</a></li></ul></nav>
<form role="search" class="search-form" action="/"><input type="search" name="s" placeholder="Search the Coast Times"><button type="submit">Search</button></form></header>
<div class="ad-slot ad-slot--top" id="ad-top"><p class="ad-slot__label">Advertisement</p><div id="div-gpt-ad-1612-0" class="ad-slot__content"></div></div>
<div id="page" class="site"><div id="content" class="site-content"><div id="primary" class="content-area"><main id="main" class="site-main">
<article id="post-4812" class="post-4812 post type-post status-publish format-standard has-post-thumbnail hentry category-local">
<header class="entry-header"><h1 class="entry-title">Harbour fleet returns early as storms close the crossing</h1>
<div class="entry-meta"><span class="byline">By <a class="url fn n" href="/author/awriter/">Anna Writer</a></span> <time class="entry-date published" datetime="2026-11-28T07:40:00+00:00">28 November 2026</time></div></header>
<ul class="share-buttons"><li><a class="share-facebook" href="/share?fb">Share on Facebook</a></li><li><a class="share-twitter" href="/share?x">Share on X</a></li><li><a class="share-email" href="/share?mail">Email</a></li></ul>
<figure class="post-thumbnail"><img src="/uploads/2026/11/harbour.jpg" alt="Fishing boats moored in the harbour"><figcaption>Boats moored two deep along the north quay on Friday morning.</figcaption></figure>
<div class="entry-content">
`)
	for i, p := range paragraphs {
		key := fmt.Sprintf("KEY %d: %s", i+1, p.key)
		keys = append(keys, key)
		fmt.Fprintf(&b, "<p>%s %s</p>\n", p.text, key)
		if i == 2 {
			b.WriteString(`<h2>What the skippers say</h2>` + "\n")
		}
		if i == 5 {
			b.WriteString(`<h2>The market, and the weeks ahead</h2>` + "\n")
		}
		if i%3 == 1 {
			fmt.Fprintf(&b, `<div class="ad-slot ad-slot--inline" id="ad-inline-%d" data-ad-unit="/1612/coast/local/inline%d"><p class="ad-slot__label">Advertisement</p><div id="div-gpt-ad-1612-%d" class="ad-slot__content"></div></div>`+"\n", i, i, i)
		}
	}
	b.WriteString(`</div>
<footer class="entry-footer"><span class="cat-links">Posted in <a href="/local/" rel="category tag">Local</a></span> <span class="tags-links">Tagged <a href="/tag/fishing/" rel="tag">fishing</a>, <a href="/tag/weather/" rel="tag">weather</a></span></footer>
</article>
<div class="newsletter-signup"><h3>Get the Coast Times in your inbox</h3><p>Our morning briefing, every weekday, free.</p><form action="/subscribe" method="post"><input type="email" name="email" placeholder="Your email address"><button type="submit">Sign up</button></form></div>
<div class="ob-widget sponsored-links"><h3 class="ob-widget-header">Sponsored</h3><ul>
<li><a href="https://ads.example/1">Sponsored: This one trick lowers your energy bill</a></li><li><a href="https://ads.example/2">Sponsored: Homeowners on the coast are switching insurers</a></li><li><a href="https://ads.example/3">Sponsored: The shoes sailors swear by</a></li></ul></div>
<nav class="navigation post-navigation" aria-label="Posts"><div class="nav-links"><div class="nav-previous"><a href="/2026/11/27/lifeboat-crew/" rel="prev">Previous: Lifeboat crew honoured for night rescue</a></div><div class="nav-next"><a href="/2026/11/29/market-hall/" rel="next">Next: Market hall repairs to start in spring</a></div></div></nav>
`)
	fmt.Fprintf(&b, `<div id="comments" class="comments-area">
<h2 class="comments-title">%d thoughts on &ldquo;Harbour fleet returns early as storms close the crossing&rdquo;</h2>
<ol class="comment-list">
`, comments)
	for i := 0; i < comments; {
		// A thread: a comment and up to three replies.
		replies := r.IntN(4)
		if i+1+replies > comments {
			replies = comments - i - 1
		}
		writeComment(&b, r, i, 1)
		i++
		if replies > 0 {
			b.WriteString(`<ol class="children">` + "\n")
			for range replies {
				writeComment(&b, r, i, 2)
				b.WriteString("</li>\n")
				i++
			}
			b.WriteString("</ol>\n")
		}
		b.WriteString("</li>\n")
	}
	b.WriteString(`</ol>
<div id="respond" class="comment-respond"><h3 id="reply-title" class="comment-reply-title">Leave a Reply</h3><form action="/wp-comments-post.php" method="post" id="commentform" class="comment-form"><p class="comment-notes">Your email address will not be published. Required fields are marked *</p><p class="comment-form-comment"><label for="comment">Comment *</label><textarea id="comment" name="comment" cols="45" rows="8" required></textarea></p><p class="form-submit"><input name="submit" type="submit" id="submit" class="submit" value="Post Comment"></p></form></div>
</div>
</main></div>
<aside id="secondary" class="widget-area"><section class="widget widget_recent_entries"><h2 class="widget-title">Most read</h2><ul>
<li><a href="/2026/11/26/ferry/">Ferry timetable cut for the winter</a></li><li><a href="/2026/11/25/school/">New school opens on the hill</a></li><li><a href="/2026/11/24/bridge/">Bridge closed for repairs</a></li></ul></section>
<section class="widget related-stories"><h2 class="widget-title">Related stories</h2><ul><li><a href="/2026/10/02/quota/">Quota talks stall again</a></li><li><a href="/2026/09/14/harbour-wall/">Harbour wall repairs finished</a></li></ul></section>
<div class="ad-slot ad-slot--mpu" id="ad-side"><p class="ad-slot__label">Advertisement</p><div id="div-gpt-ad-1612-99" class="ad-slot__content"></div></div></aside>
</div></div>
<footer id="colophon" class="site-footer"><div class="site-info"><p>&copy; 2026 The Coast Times. All rights reserved.</p><ul class="footer-links"><li><a href="/about/">About us</a></li><li><a href="/contact/">Contact</a></li><li><a href="/privacy/">Privacy policy</a></li><li><a href="/terms/">Terms</a></li></ul></div></footer>
<script src="/static/comments.js" defer></script>
<script>(function(){var s=document.createElement('script');s.src='https://ads.example/gpt.js';document.head.appendChild(s)})();</script>
</body></html>
`)
	return b.Bytes(), keys
}

// writeComment writes comment i at depth, its <li> left open for replies.
func writeComment(b *bytes.Buffer, r *rand.Rand, i, depth int) {
	name := commenters[r.IntN(len(commenters))]
	day, hour, minute := 28+r.IntN(2), r.IntN(24), r.IntN(60)
	fmt.Fprintf(b, `<li id="comment-%[1]d" class="comment byuser even thread-even depth-%[2]d">
<article id="div-comment-%[1]d" class="comment-body">
<footer class="comment-meta"><div class="comment-author vcard"><img alt="" src="https://secure.gravatar.com/avatar/%08[3]x?s=32&amp;d=mm&amp;r=g" srcset="https://secure.gravatar.com/avatar/%08[3]x?s=64&amp;d=mm&amp;r=g 2x" class="avatar avatar-32 photo" height="32" width="32" loading="lazy" decoding="async"> <b class="fn">%[4]s</b> <span class="says">says:</span></div>
<div class="comment-metadata"><a href="/2026/11/28/harbour-fleet/#comment-%[1]d"><time datetime="2026-11-%[5]dT%02[6]d:%02[7]d:00+00:00">%[5]d November 2026 at %02[6]d:%02[7]d</time></a></div></footer>
<div class="comment-content">`, i+10000, depth, r.Uint32(), name, day, hour, minute)
	for range 1 + r.IntN(3) {
		b.WriteString("<p>")
		for s := range 1 + r.IntN(4) {
			if s > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(remarks[r.IntN(len(remarks))])
		}
		b.WriteString("</p>")
	}
	fmt.Fprintf(b, `</div>
<div class="comment-likes"><button type="button" class="like-button" data-comment-id="%[1]d" aria-label="Like this comment"><svg class="icon" width="14" height="14" aria-hidden="true"><use href="#icon-like"></use></svg></button> <span class="like-count">%[3]d</span></div>
<div class="reply"><a rel="nofollow" class="comment-reply-link" href="/2026/11/28/harbour-fleet/?replytocom=%[1]d#respond" data-commentid="%[1]d" data-postid="4812" data-belowelement="div-comment-%[1]d" data-respondelement="respond" aria-label="Reply to %[2]s">Reply</a></div>
</article>
`, i+10000, name, r.IntN(40))
}

// paragraphs are the article's, each with its key sentence.
var paragraphs = []struct{ text, key string }{
	{"The harbour's fishing fleet came home two days early on Friday, after the coastguard warned of a second storm closing the crossing before the weekend. By noon the north quay was moored two deep, and the harbour master opened the old basin for the first time since the spring.",
		"Forty-one boats were back in port by Friday evening."},
	{"Skippers who had planned a full week at the banks said the forecast left them no choice. The swell had been building since Wednesday, and the ferry company cancelled its afternoon sailings on Thursday, the first cancellations of the winter.",
		"The ferry company expects to resume sailings on Monday if the wind drops."},
	{"The early return cut the week's landings by about a third, according to the fish market's own count. Prices rose at the Friday auction, but not enough, buyers said, to make up for the smaller catch.",
		"Cod sold for 4.20 a kilo at Friday's auction, up from 3.10 a week earlier."},
	{"Several skippers said the storms had become harder to plan around. Forecasts were good, they said, but the gaps between the systems had shortened, and a boat that needed two clear days at the banks was finding fewer of them each winter.",
		"One skipper said his boat had fished only nine full days since October."},
	{"The harbour master, who has kept the port's log for eighteen years, said the entries bore that out. The log records every closure of the crossing, and the number of closures in November has doubled over the last decade.",
		"The crossing has been closed on eleven days this November."},
	{"Crews spent Friday afternoon checking moorings and lashing gear on deck. Volunteers from the lifeboat station walked the quay with the harbour staff, and the old basin's gates were shut at high water for the first time this year.",
		"The basin's gates will stay shut until the storm has passed."},
	{"At the market, traders said the week would be judged by the weekend's restaurants. Most had ordered before the fleet came in, and several had switched to farmed fish, which keeps its price whatever the weather.",
		"The market will open on Saturday morning as usual."},
	{"The council said it would review the harbour's winter plan in January, including the proposal to deepen the old basin so that larger boats can shelter there. The work was costed last year but has not yet been funded.",
		"Deepening the old basin would cost an estimated 2.4 million."},
	{"For now, the fleet waits. The next clear window, forecasters say, may come on Tuesday, and most skippers expect to sail the moment it opens, storms or no storms behind it.",
		"The coastguard will issue its next forecast at six on Sunday evening."},
}

// commenters and remarks make the comments.
var commenters = []string{"Sailor Jim", "harbourwatcher", "M. Penrose", "old salt", "Kate from the quay", "TideTables", "northbeach_dad", "R. Trelawny", "anon", "Fisher's wife", "coastal_commuter", "DeckhandDave"}

var remarks = []string{
	"I have sailed from that harbour for years and the prices were always like this in spring, nothing new.",
	"The council has known about the basin for a decade and done nothing.",
	"Good to see the boats home safe, that is what matters.",
	"Farmed fish is not the same, whatever the restaurants tell you.",
	"My father fished these waters for forty years and he would say the same about the forecasts.",
	"Who is going to pay for deepening the basin? Not the visitors, that's for sure.",
	"Ferry cancelled again, so much for the winter timetable.",
	"Thanks to the lifeboat volunteers, as always.",
	"Prices at the auction never reach the boats, the middlemen take it all.",
	"Anyone know if the market will be open on Sunday as well?",
	"This paper only ever reports bad news about the harbour.",
	"The storms were worse in the seventies, people forget.",
	"Great photo of the north quay.",
	"Same story every November, and every November the council promises a review.",
	"Buy local fish this weekend, the crews need it.",
	"I walked the quay on Friday and it was packed, never seen it so full.",
}

// Boilerplate holds a text of each kind of boilerplate on NewsPage (the
// cookie dialog, the menu, the share buttons, an ad label, the sponsored
// links, the comments and their form, the sidebar, the footer): what an
// extraction of its article must leave out. (The newsletter box after
// the article stays: Mozilla's Readability keeps it too.)
var Boilerplate = []string{
	"We use cookies", "Opinion", "Share on", "Advertisement", "Sponsored",
	"thoughts on", "says:", remarks[0], remarks[1], "Leave a Reply", "Most read", "Related stories", "All rights reserved",
}
