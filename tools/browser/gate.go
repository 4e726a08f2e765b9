package browser

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/internal/netproxy"
)

// maxRefusals is how many refusals a gate keeps, the newest.
const maxRefusals = 50

// gate is a session's navigation guard: a filtering proxy on loopback
// that the session's Chromium sends every request through, loopback
// included, so that every address a page loads from — the page itself,
// each redirect, each image, script and fetch — is checked as web_fetch
// checks its own: private and loopback addresses refused after
// resolution, except the hosts allowed.
type gate struct {
	m   *Manager
	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex
	proxy    *netproxy.Proxy
	guard    *netguard.Guard
	allowed  []string  // the hosts proxy allows, sorted
	refusals []refusal // newest last
	count    int       // refusals ever, kept or not
}

// refusal is one host the gate refused, and why.
type refusal struct{ host, why string }

// openGate starts a gate with nothing allowed beyond public hosts.
func (m *Manager) openGate() (*gate, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the browser's proxy: %w", err)
	}
	g := &gate{m: m, ln: ln}
	if err := g.allow(nil); err != nil {
		ln.Close()
		return nil, err
	}
	g.srv = &http.Server{Handler: g}
	go g.srv.Serve(ln)
	return g, nil
}

// addr is where the gate listens.
func (g *gate) addr() string { return g.ln.Addr().String() }

// ServeHTTP hands a request to the current proxy.
func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	p := g.proxy
	g.mu.Unlock()
	p.ServeHTTP(w, r)
}

// allow makes hosts the hosts reached although private: a new proxy when
// they changed (the old one's tunnels end; the browser opens new ones).
func (g *gate) allow(hosts []string) error {
	hosts = slices.Compact(slices.Sorted(slices.Values(hosts)))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.proxy != nil && slices.Equal(hosts, g.allowed) {
		return nil
	}
	guard, err := netguard.New(netguard.Options{AllowHosts: hosts, Name: "browser", Setting: "tools.browser.allowHosts",
		Resolver: g.m.opts.Resolver, Dial: g.m.opts.Dial})
	if err != nil {
		return err
	}
	p, err := netproxy.New(netproxy.Options{Guard: guard, Report: g.report})
	if err != nil {
		return err
	}
	if g.proxy != nil {
		g.proxy.Close()
	}
	g.proxy, g.guard, g.allowed = p, guard, hosts
	return nil
}

// report keeps the refusals, for the console action and for the error of
// a navigation refused.
func (g *gate) report(e netproxy.Event) {
	if !e.Refused {
		return
	}
	var r *netguard.Refusal
	why := e.Err.Error()
	if errors.As(e.Err, &r) {
		why = r.Reason
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.count++
	g.refusals = append(g.refusals, refusal{net.JoinHostPort(e.Host, e.Port), why})
	if n := len(g.refusals) - maxRefusals; n > 0 {
		g.refusals = g.refusals[n:]
	}
}

// refused returns the refusals kept, one a line, and how many were ever made.
func (g *gate) refused() (lines []string, count int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.refusals {
		lines = append(lines, "refused "+r.host+": "+r.why)
	}
	return lines, g.count
}

// refusedSince returns the latest refusal of the host of u among the
// refusals after the first n ever made; "" when there is none.
func (g *gate) refusedSince(n int, u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	host := net.JoinHostPort(p.Hostname(), port(p))
	g.mu.Lock()
	defer g.mu.Unlock()
	kept := min(g.count-n, len(g.refusals))
	for i := len(g.refusals) - 1; i >= len(g.refusals)-kept; i-- {
		if r := g.refusals[i]; r.host == host {
			return r.host + ": " + r.why
		}
	}
	return ""
}

// check refuses what can be told from the address alone, before the
// browser goes there: a scheme other than http and https, credentials,
// a host that is or is spelled as a forbidden address.
func (g *gate) check(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("the url %q does not parse: %v", raw, err)
	}
	g.mu.Lock()
	guard := g.guard
	g.mu.Unlock()
	return guard.CheckURL(u)
}

// close stops the gate and its proxy.
func (g *gate) close() {
	g.srv.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.proxy.Close()
}

// port is the port of u, the scheme's default when it gives none.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// AllowPreview lets the browser of the session (every session's, for "")
// reach host ("host:port"), a preview the caller serves, although it is on
// loopback or a private address: the canvas host, a workspace's dev server
// the program started.
func (m *Manager) AllowPreview(session, host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.previews == nil {
		m.previews = map[string][]string{}
	}
	if !slices.Contains(m.previews[session], host) {
		m.previews[session] = append(m.previews[session], host)
	}
}

// allowedHosts are the hosts the session's browser may reach although
// private: the session's previews, every session's, and allowHosts.
func (m *Manager) allowedHosts(session string, allowHosts []string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Concat(m.previews[session], m.previews[""], allowHosts)
}

// reguard brings the session's gate in line with the hosts it allows.
func (s *session) reguard() error {
	return s.gate.allow(s.m.allowedHosts(s.key, s.settings.allowHosts))
}
