package web

import (
	"context"
	"net/url"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// Getter fetches URLs for other tools under web_fetch's rules: its
// settings (tools.web_fetch: allowed hosts, redirects, size and time
// limits), the SSRF guard on every address and every redirect, and its
// errors written for the model. The image tool reads images by URL with it.
type Getter struct{ f *fetcher }

// NewGetter returns a Getter with the web_fetch settings of tc's
// configuration (tc may be nil: the defaults).
func NewGetter(tc *tool.Context, opts Options) (*Getter, error) {
	f, err := newFetcher(tc, opts)
	if err != nil {
		return nil, err
	}
	return &Getter{f}, nil
}

// Get fetches rawURL, asking for the media types in accept (an Accept
// header), and returns the body and the Content-Type the server declared.
// A body longer than tools.web_fetch.maxResponseBytes is an error: a cut
// file is of no use to the caller. Every error is a [tool.InputError].
func (g *Getter) Get(ctx context.Context, rawURL, accept string) (body []byte, contentType string, err error) {
	raw := strings.TrimSpace(rawURL)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", tool.InputErrorf("%q is not a URL (%v): give an absolute http:// or https:// URL.", raw, err)
	}
	if err := g.f.guard.CheckURL(u); err != nil {
		return nil, "", tool.InputErrorf("%v.", err)
	}
	r, err := g.f.get(ctx, u, accept)
	if err != nil {
		return nil, "", err
	}
	if r.cut {
		return nil, "", tool.InputErrorf("%s is larger than %d bytes, the most tools.web_fetch.maxResponseBytes allows.", r.final.Redacted(), g.f.s.maxBytes)
	}
	return r.body, r.contentType, nil
}
