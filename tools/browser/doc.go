// Package browser is the browser tool: a headless Chromium, one per
// session, driven over the DevTools protocol (chromedp) so that an agent
// can open what it builds, read it as an accessibility tree with element
// refs, act on it by ref, and look at it in screenshots.
//
// A [Manager] owns the browsers: it starts a session's on first use with a
// profile of its own, caps its tabs and its pages' memory, starts it again
// after a crash, and kills every process of every browser on Close.
// [Register] adds the browser tool, run by a Manager, to a registry; other
// packages picture their own pages with [Manager.Capture].
package browser
