package web_test

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/tools/web"
)

// connectProxy is an HTTP proxy on 127.0.0.1 that only tunnels (CONNECT),
// records the targets it is asked for, and reaches "public" addresses
// through a table of local servers, as a real proxy would reach the
// internet.
type connectProxy struct {
	*server
	routes map[string]string // "ip:port" → "127.0.0.1:port"
	auth   string            // the Proxy-Authorization it wants, if any
	mu     sync.Mutex
	asked  []string
}

func newConnectProxy(t *testing.T, routes map[string]string, auth string) *connectProxy {
	t.Helper()
	p := &connectProxy{routes: routes, auth: auth}
	p.server = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "this test proxy only tunnels", http.StatusMethodNotAllowed)
			return
		}
		p.mu.Lock()
		p.asked = append(p.asked, r.Host)
		p.mu.Unlock()
		if p.auth != "" && r.Header.Get("Proxy-Authorization") != p.auth {
			w.WriteHeader(http.StatusProxyAuthRequired)
			return
		}
		to, ok := p.routes[r.Host]
		if !ok {
			http.Error(w, "no route", http.StatusBadGateway)
			return
		}
		up, err := net.Dial("tcp", to)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
		rw.Flush()
		go func() { io.Copy(up, rw); up.Close() }()
		io.Copy(conn, up)
		conn.Close()
	}))
	return p
}

func (p *connectProxy) targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

// TestFetchProxy shows web_fetch using the proxy the standard environment
// variables name without the proxy becoming a way around the guard: the
// proxy is asked for a tunnel to the address web_fetch resolved and checked,
// never for a name, so rebinding, redirects inside and private names are
// refused before the proxy hears of them.
func TestFetchProxy(t *testing.T) {
	t.Parallel()
	private := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "SECRET internal data")
	}))
	site := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/inside":
			http.Redirect(w, r, private.URL+"/", http.StatusFound)
		case "/inside-by-name":
			http.Redirect(w, r, "http://inside.test/", http.StatusTemporaryRedirect)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "public page for host %s", r.Host)
		}
	}))
	const public = "93.184.216.34:80"
	proxy := newConnectProxy(t, map[string]string{public: site.hostPort(), private.hostPort(): private.hostPort()}, "")
	res := newResolver(map[string][][]string{
		"public.test": {{"93.184.216.34"}},
		"rebind.test": {{"93.184.216.34"}, {"127.0.0.1"}},
		"inside.test": {{"10.0.0.5"}},
	})
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	dialer := &fakeDialer{routes: map[string]string{public: site.hostPort()}}
	h := newHarness(t, setup{
		fetch: map[string]any{"cacheTtl": "0s"},
		opts:  web.Options{Resolver: res, Dial: dialer.Dial, Getenv: env(map[string]string{"HTTP_PROXY": proxy.URL})},
	})

	text, msg := h.fetch(map[string]any{"url": "http://public.test/"})
	if msg.IsError || !strings.Contains(text, "public page for host public.test") {
		t.Fatalf("through the proxy: %s", text)
	}
	if got := proxy.targets(); !slices.Equal(got, []string{public}) {
		t.Errorf("the proxy was asked for %v, want the checked address %s (no name)", got, public)
	}
	for _, a := range dialer.addrs() {
		if a != proxy.hostPort() {
			t.Errorf("dialed %s directly, with a proxy configured", a)
		}
	}

	// Rebinding: the second answer is private, and refused before the
	// proxy is asked anything.
	h.fetch(map[string]any{"url": "http://rebind.test/"})
	text, msg = h.fetch(map[string]any{"url": "http://rebind.test/"})
	if !msg.IsError || !strings.Contains(text, "rebind.test resolves to 127.0.0.1") {
		t.Errorf("rebinding through the proxy: %s", text)
	}
	for _, tc := range []struct{ url, want string }{
		{"http://public.test/inside", "a redirect from http://public.test/inside led here, and 127.0.0.1 is a loopback address"},
		{"http://public.test/inside-by-name", "inside.test resolves to 10.0.0.5"},
		{"http://10.0.0.1/", "private address (10.0.0.0/8)"},
		{"http://inside.test/", "inside.test resolves to 10.0.0.5"},
	} {
		text, msg := h.fetch(map[string]any{"url": tc.url})
		if !msg.IsError || !strings.Contains(text, "refused") || !strings.Contains(text, tc.want) {
			t.Errorf("%s: %s", tc.url, text)
		}
	}
	if got := proxy.targets(); len(got) != 4 || slices.ContainsFunc(got, func(s string) bool { return s != public }) {
		t.Errorf("the proxy was asked for %v: only %s, four times, is right", got, public)
	}
	if private.hits.Load() != 0 {
		t.Errorf("the private server got %d requests", private.hits.Load())
	}

	// NO_PROXY sends a host directly; HTTPS_PROXY alone does not apply to
	// http:// URLs.
	for _, vars := range []map[string]string{
		{"HTTP_PROXY": proxy.URL, "NO_PROXY": "example.org,public.test"},
		{"HTTPS_PROXY": proxy.URL},
	} {
		d := &fakeDialer{routes: map[string]string{public: site.hostPort()}}
		before := len(proxy.targets())
		h := newHarness(t, setup{fetch: map[string]any{"cacheTtl": "0s"}, opts: web.Options{Resolver: res, Dial: d.Dial, Getenv: env(vars)}})
		if text, msg := h.fetch(map[string]any{"url": "http://public.test/"}); msg.IsError || !strings.Contains(text, "public page") {
			t.Errorf("%v: %s", vars, text)
		}
		if n := len(proxy.targets()) - before; n != 0 || !slices.Equal(d.addrs(), []string{public}) {
			t.Errorf("%v: %d tunnels, dialed %v; want a direct connection", vars, n, d.addrs())
		}
	}
}

// TestFetchProxyAuth sends the credentials of the proxy's URL, and makes a
// proxy's refusal an error that names the proxy and what it answered.
func TestFetchProxyAuth(t *testing.T) {
	t.Parallel()
	site := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "public page") }))
	const public = "93.184.216.34:80"
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("agent:s3cret"))
	proxy := newConnectProxy(t, map[string]string{public: site.hostPort()}, want)
	res := newResolver(map[string][][]string{"public.test": {{"93.184.216.34"}}})
	for _, tc := range []struct {
		proxyURL, want string
		ok             bool
	}{
		{"http://agent:s3cret@" + proxy.hostPort(), "public page", true},
		{proxy.URL, "refused a tunnel to 93.184.216.34:80: 407 Proxy Authentication Required", false},
		{"http://agent:wrong@" + proxy.hostPort(), "the proxy http://agent:xxxxx@" + proxy.hostPort() + " refused a tunnel", false},
		{"socks5://agent:wrong@" + proxy.hostPort(), "is a socks5 proxy: web_fetch tunnels only through http:// proxies", false},
		{"https://" + proxy.hostPort(), "is a https proxy: web_fetch tunnels only through http:// proxies", false},
	} {
		h := newHarness(t, setup{fetch: map[string]any{"cacheTtl": "0s"}, opts: web.Options{Resolver: res, Dial: (&fakeDialer{}).Dial,
			Getenv: func(k string) string {
				if k == "http_proxy" {
					return tc.proxyURL
				}
				return ""
			}}})
		text, msg := h.fetch(map[string]any{"url": "http://public.test/"})
		if msg.IsError == tc.ok || !strings.Contains(text, tc.want) {
			t.Errorf("%s: error %v: %s", tc.proxyURL, msg.IsError, text)
		}
		if strings.Contains(text, "wrong") || strings.Contains(text, "s3cret") {
			t.Errorf("%s: the proxy's password is in the result: %s", tc.proxyURL, text)
		}
	}
	// A name only the proxy could resolve: the error says web_fetch
	// resolves names itself.
	h := newHarness(t, setup{fetch: map[string]any{"cacheTtl": "0s"}, opts: web.Options{Resolver: res, Dial: (&fakeDialer{}).Dial,
		Getenv: func(k string) string {
			if k == "HTTP_PROXY" {
				return proxy.URL
			}
			return ""
		}}})
	text, msg := h.fetch(map[string]any{"url": "http://unknown.test/"})
	if !msg.IsError || !strings.Contains(text, "web_fetch resolves names itself, also when it uses the proxy") {
		t.Errorf("unresolvable name with a proxy: %s", text)
	}
}

// TestFetchHTTPS fetches over TLS (HTTP/2 where the server offers it),
// directly and through a proxy's tunnel to the checked address, with the
// site's own name for TLS; a certificate web_fetch does not trust is an
// error.
func TestFetchHTTPS(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "secure page, host %s, HTTP/%d, SNI %q", r.Host, r.ProtoMajor, r.TLS.ServerName)
	}))
	tlsSrv.EnableHTTP2 = true
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusting client's handshake fails on purpose
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	hostPort := strings.TrimPrefix(tlsSrv.URL, "https://")

	h := newHarness(t, setup{fetch: map[string]any{"allowHosts": []string{hostPort}, "cacheTtl": "0s"}, opts: web.Options{RootCAs: roots}})
	text, msg := h.fetch(map[string]any{"url": tlsSrv.URL + "/"})
	if msg.IsError || !strings.Contains(text, "secure page, host "+hostPort+", HTTP/2") {
		t.Errorf("direct https: %s", text)
	}
	untrusting := newHarness(t, setup{fetch: map[string]any{"allowHosts": []string{hostPort}, "cacheTtl": "0s"}})
	text, msg = untrusting.fetch(map[string]any{"url": tlsSrv.URL + "/"})
	if !msg.IsError || !strings.Contains(text, "certificate") {
		t.Errorf("an untrusted certificate: %s", text)
	}

	// Through the proxy: example.com (a name the test certificate holds)
	// resolves to a public address, and the proxy is asked for that address.
	const public = "93.184.216.34:443"
	proxy := newConnectProxy(t, map[string]string{public: hostPort}, "")
	res := newResolver(map[string][][]string{"example.com": {{"93.184.216.34"}}, "inside.example.com": {{"10.1.2.3"}}})
	hp := newHarness(t, setup{fetch: map[string]any{"cacheTtl": "0s"}, opts: web.Options{RootCAs: roots, Resolver: res, Dial: (&fakeDialer{}).Dial,
		Getenv: func(k string) string {
			if k == "HTTPS_PROXY" {
				return proxy.URL
			}
			return ""
		}}})
	text, msg = hp.fetch(map[string]any{"url": "https://example.com/"})
	if msg.IsError || !strings.Contains(text, `secure page, host example.com, HTTP/2, SNI "example.com"`) {
		t.Errorf("https through the proxy: %s", text)
	}
	text, msg = hp.fetch(map[string]any{"url": "https://inside.example.com/"})
	if !msg.IsError || !strings.Contains(text, "inside.example.com resolves to 10.1.2.3") {
		t.Errorf("a private name through the proxy: %s", text)
	}
	if got := proxy.targets(); !slices.Equal(got, []string{public}) {
		t.Errorf("the proxy was asked for %v, want [%s]", got, public)
	}
}
