package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/toolbelt/toolbelt/tool"
)

// open opens url in a new tab, which becomes current.
func (s *session) open(ctx context.Context, url string) (tool.Result, error) {
	if strings.TrimSpace(url) == "" {
		return tool.Result{}, tool.InputErrorf("open needs a url (http:// or https://)")
	}
	if err := s.gate.check(url); err != nil {
		return tool.Result{}, tool.InputErrorf("%v", err)
	}
	t, err := s.newTab()
	if err != nil {
		return tool.Result{}, tool.InputErrorf("%v", err)
	}
	s.current = t
	if err := s.load(ctx, t, url); err != nil {
		return tool.Result{}, err
	}
	return s.done(ctx, t, "Opened tab "+string(t.id)+"."), nil
}

// navigate goes to url in the tab t.
func (s *session) navigate(ctx context.Context, t *tab, url string) (tool.Result, error) {
	if strings.TrimSpace(url) == "" {
		return tool.Result{}, tool.InputErrorf("navigate needs a url (http:// or https://)")
	}
	if err := s.gate.check(url); err != nil {
		return tool.Result{}, tool.InputErrorf("%v", err)
	}
	if err := s.load(ctx, t, url); err != nil {
		return tool.Result{}, err
	}
	return s.done(ctx, t, "Navigated."), nil
}

// load loads url in t and waits for it; a load the gate refused says why.
func (s *session) load(ctx context.Context, t *tab, url string) error {
	t.refs = refs{next: t.refs.next} // the old page's refs go stale; numbers are not reused
	t.revive()
	_, before := s.gate.refused()
	_, err := run(ctx, t, chromedp.Navigate(strings.TrimSpace(url)))
	// A redirect refused leaves the tab on the address it was refused.
	for _, u := range []string{url, s.tabURL(ctx, t)} {
		if why := s.gate.refusedSince(before, u); why != "" {
			return tool.InputErrorf("refused %s. Pages may be opened from public hosts, this session's previews and the hosts of tools.browser.allowHosts", why)
		}
	}
	if err == nil {
		return nil
	}
	var le *chromedp.LoadError
	if errors.As(err, &le) {
		return tool.InputErrorf("loading %s failed: %s", url, le.ErrorText)
	}
	return fmt.Errorf("loading %s: %w", url, err)
}

// tabURL is the address t shows.
func (s *session) tabURL(ctx context.Context, t *tab) string {
	u, _ := t.info(ctx)
	return u
}
