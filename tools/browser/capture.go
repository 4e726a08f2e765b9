package browser

import (
	"context"
	"encoding/json"
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/toolbelt/toolbelt/tool"
)

// CaptureOptions say how Capture pictures a page: the viewport's size in
// CSS pixels (default 1280×800), the whole page or the viewport, and the
// image's type, "png" (default) or "jpeg".
type CaptureOptions struct {
	Width, Height int
	FullPage      bool
	Type          string
}

// Capture opens url in a new tab of the session's browser (starting it if
// needed), waits for the page to load, takes a screenshot and closes the
// tab. The caller vouches for url (a preview it serves, such as the canvas
// on loopback): its host becomes one of the session's previews, which the
// session's browser may reach although it is loopback. The tab counts towards the session's cap while it
// is open.
func (m *Manager) Capture(ctx context.Context, session, url string, o CaptureOptions) ([]byte, error) {
	format, err := imageFormat(o.Type)
	if err != nil {
		return nil, err
	}
	var png []byte
	err = m.withPage(ctx, session, url, o, func(t *tab) error {
		png, err = screenshot(ctx, t, format, o.FullPage, nil)
		return err
	})
	return png, err
}

// Inspect opens url as Capture does, at the viewport o says, and returns
// the JSON of what the JavaScript expression script evaluates to in the
// loaded page (a promise is awaited): how a program that serves a page
// measures it (its layout, an accessibility checker run in it).
func (m *Manager) Inspect(ctx context.Context, session, url string, o CaptureOptions, script string) (json.RawMessage, error) {
	var out json.RawMessage
	err := m.withPage(ctx, session, url, o, func(t *tab) error {
		var err error
		out, err = run(ctx, t, chromedp.Evaluate[json.RawMessage](script, chromedp.EvalAwaitPromise))
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		return nil
	})
	return out, err
}

// withPage runs f on a new tab of the session's browser that shows url,
// loaded, at the viewport of o (default 1280×800), and closes the tab; url's
// host becomes one of the session's previews.
func (m *Manager) withPage(ctx context.Context, session, url string, o CaptureOptions, f func(*tab) error) error {
	s, err := m.session(session)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	defer s.used()
	u, err := neturl.Parse(url)
	if err != nil || u.Host == "" {
		return fmt.Errorf("capture: %q is not an absolute URL", url)
	}
	m.AllowPreview(session, u.Host)
	if err := s.ensure(); err != nil {
		return err
	}
	if err := s.reguard(); err != nil {
		return err
	}
	return s.sized(ctx, url, o.Width, o.Height, f)
}

// sized runs f on a new tab of the running browser that shows url, loaded
// (through the gate, as any page), at a viewport of w×h (default
// 1280×800), and closes the tab. The current tab stays current.
func (s *session) sized(ctx context.Context, url string, w, h int, f func(*tab) error) error {
	t, err := s.newTab()
	if err != nil {
		return err
	}
	defer s.closeTab(t)
	if w <= 0 {
		w = 1280
	}
	if h <= 0 {
		h = 800
	}
	if _, err := call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: int64(w), Height: int64(h), DeviceScaleFactor: 1}); err != nil {
		return fmt.Errorf("sizing the viewport: %w", err)
	}
	if err := s.load(ctx, t, url); err != nil {
		return err
	}
	if _, err := run(ctx, t, chromedp.Evaluate[json.RawMessage](painted, chromedp.EvalAwaitPromise)); err != nil {
		return fmt.Errorf("waiting for the page to be drawn: %w", err)
	}
	return f(t)
}

// painted is a script that resolves once the loaded page has been drawn:
// ten animation frames after the load (about 170 ms), so that the frames
// in it, which draw in processes of their own (a canvas's presented page),
// have been drawn too.
const painted = `new Promise(r => { let n = 10; const f = () => --n > 0 ? requestAnimationFrame(f) : r(true); requestAnimationFrame(f); })`

// screenshotAt is the screenshot action given a url: a picture of that
// page, opened in a tab of its own at the viewport width × height, which
// is closed after; the tabs open are left as they are. The url is checked
// as open checks it: private hosts only when tools.browser.allowHosts
// lists them.
func (s *session) screenshotAt(ctx context.Context, in args) (tool.Result, error) {
	switch {
	case strings.TrimSpace(in.URL) == "":
		return tool.Result{}, tool.InputErrorf("width and height size the tab of a screenshot with url: give the url of the page to picture")
	case in.Ref != "" || in.TargetID != "":
		return tool.Result{}, tool.InputErrorf("a screenshot with url pictures that page in a tab of its own: give no ref or targetId with it")
	}
	if err := s.gate.check(in.URL); err != nil {
		return tool.Result{}, tool.InputErrorf("%v", err)
	}
	var res tool.Result
	err := s.sized(ctx, in.URL, in.Width, in.Height, func(t *tab) error {
		var err error
		res, err = t.screenshotResult(ctx, in)
		return err
	})
	return res, err
}

// imageFormat checks a screenshot's type: "png" (the default) or "jpeg".
func imageFormat(typ string) (page.CaptureScreenshotFormat, error) {
	switch typ {
	case "", "png":
		return page.CaptureScreenshotFormatPng, nil
	case "jpeg", "jpg":
		return page.CaptureScreenshotFormatJpeg, nil
	}
	return "", fmt.Errorf("screenshot type %q: use png or jpeg", typ)
}

// screenshot pictures the tab: the viewport, the whole page, or the area
// clip (an element's).
func screenshot(ctx context.Context, t *tab, format page.CaptureScreenshotFormat, fullPage bool, clip *page.Viewport) ([]byte, error) {
	p := page.CaptureScreenshotParams{Format: format, FromSurface: new(true), Clip: clip}
	if fullPage || clip != nil {
		p.CaptureBeyondViewport = new(true)
	}
	if format == page.CaptureScreenshotFormatJpeg {
		p.Quality = new(int64(85))
	}
	res, err := call(ctx, t, page.CaptureScreenshot, p)
	if err != nil {
		return nil, fmt.Errorf("taking the screenshot: %w", err)
	}
	return res.Data, nil
}
