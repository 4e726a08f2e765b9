package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/internal/netguard"
)

// names answers host names from a table, as a test's DNS.
type names map[string]string

func (n names) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := n[strings.ToLower(host)]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// events records what the proxy reported.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) list() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.all...)
}

// startProxy serves a proxy on a fresh listener (network "tcp" or "unix")
// whose guard knows the hosts of dns, allows the private addresses of
// allowHosts, and whose allow function refuses the hosts in deny.
func startProxy(t *testing.T, network string, dns names, allowHosts []string, deny ...string) (*Proxy, net.Listener, *events) {
	t.Helper()
	g, err := netguard.New(netguard.Options{Name: "the test proxy", AllowHosts: allowHosts, Setting: "allowHosts", Resolver: dns})
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	p, err := New(Options{
		Guard: g,
		Allow: func(_ context.Context, host, _ string) error {
			for _, d := range deny {
				if MatchDomain(d, host) {
					return fmt.Errorf("%s is not in the test's allowlist", host)
				}
			}
			return nil
		},
		Report: ev.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "proxy.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v after Close", err)
		}
	})
	return p, l, ev
}

// echoServer echoes every line it reads, on 127.0.0.1.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// connect asks the proxy at l for a tunnel to hostport and returns the
// connection and the proxy's answer.
func connect(t *testing.T, l net.Listener, hostport string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial(l.Addr().Network(), l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n", hostport, hostport)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

// TestConnectTunnel: a CONNECT to an allowed name opens a tunnel that
// carries bytes both ways, over TCP and over a unix socket, and the host is
// reported as reached.
func TestConnectTunnel(t *testing.T) {
	t.Parallel()
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			_, l, ev := startProxy(t, network, names{"echo.test": "127.0.0.1"}, []string{"echo.test"})
			c, br, resp := connect(t, l, "echo.test:"+port)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("CONNECT answered %s", resp.Status)
			}
			fmt.Fprint(c, "hello through the tunnel\n")
			line, err := br.ReadString('\n')
			if err != nil || line != "hello through the tunnel\n" {
				t.Fatalf("echo: %q, %v", line, err)
			}
			got := ev.list()
			if len(got) != 1 || got[0].Host != "echo.test" || got[0].Port != port || got[0].Refused || got[0].Err != nil {
				t.Errorf("reported %+v, want echo.test:%s reached", got, port)
			}
		})
	}
}

// TestPlainHTTP: a request to an absolute http:// URI is forwarded without
// the hop-by-hop headers, the client's proxy credentials or its address,
// and the response comes back without hop-by-hop headers either.
func TestPlainHTTP(t *testing.T) {
	t.Parallel()
	seen := make(chan http.Header, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "hop")
		w.Header().Set("Keep-Alive", "timeout=5")
		fmt.Fprintf(w, "page %s on %s", r.URL.Path, r.Host)
	}))
	t.Cleanup(site.Close)
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	_, l, ev := startProxy(t, "tcp", names{"site.test": "127.0.0.1"}, []string{"site.test"})

	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://site.test:%s/pkg HTTP/1.1\r\nHost: site.test:%s\r\n"+
		"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nConnection: X-Client-Hop\r\n"+
		"X-Client-Hop: hop\r\nKeep-Alive: timeout=5\r\nUpgrade: h2c\r\nX-Kept: yes\r\n\r\n", port, port)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "page /pkg on site.test:"+port {
		t.Fatalf("answered %s: %q", resp.Status, body)
	}
	h := <-seen
	for _, k := range []string{"Proxy-Authorization", "Proxy-Connection", "X-Client-Hop", "Keep-Alive", "Upgrade", "X-Forwarded-For", "Forwarded"} {
		if v := h.Get(k); v != "" {
			t.Errorf("the site was sent %s: %q", k, v)
		}
	}
	if h.Get("X-Kept") != "yes" {
		t.Errorf("an end-to-end header was dropped: %v", h)
	}
	for _, k := range []string{"X-Upstream-Hop", "Keep-Alive"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("the client was sent %s: %q", k, v)
		}
	}
	if got := ev.list(); len(got) != 1 || got[0].Host != "site.test" || got[0].Err != nil {
		t.Errorf("reported %+v, want site.test reached", got)
	}
}

// TestRefusals: a host the allow function refuses, a name that resolves to
// a private address, and a private address spelled as a number are each
// answered 403 with the reason, reported as refused, and never connected to.
func TestRefusals(t *testing.T) {
	t.Parallel()
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	_, l, ev := startProxy(t, "tcp", names{"denied.test": "127.0.0.1", "inside.test": "127.0.0.1"}, []string{"denied.test"}, "denied.test")
	for _, tc := range []struct{ host, why string }{
		{"denied.test", "denied.test is not in the test's allowlist"},
		{"DENIED.test.", "is not in the test's allowlist"},
		{"inside.test", "resolves to 127.0.0.1, which is a loopback address"},
		{"2130706433", "a loopback address"},
		{"[::ffff:10.0.0.1]", "a private address"},
	} {
		n := len(ev.list())
		_, _, resp := connect(t, l, net.JoinHostPort(strings.Trim(tc.host, "[]"), port))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), tc.why) || !strings.Contains(string(body), "refused by the proxy") {
			t.Errorf("CONNECT %s: %s %q, want 403 saying %q", tc.host, resp.Status, body, tc.why)
		}
		got := ev.list()[n:]
		if len(got) != 1 || !got[0].Refused || got[0].Err == nil {
			t.Errorf("CONNECT %s reported %+v, want one refusal", tc.host, got)
		}
	}
	// The same through plain HTTP.
	proxyURL, _ := url.Parse("http://" + l.Addr().String())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	for _, host := range []string{"denied.test", "inside.test"} {
		resp, err := client.Get("http://" + host + ":" + port + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "refused by the proxy") {
			t.Errorf("GET via %s: %s %q", host, resp.Status, body)
		}
	}
	for _, e := range ev.list() {
		if !e.Refused {
			t.Errorf("reported %+v as not refused", e)
		}
	}
}

// TestNotAProxyRequest: a request with a relative URI is answered 400.
func TestNotAProxyRequest(t *testing.T) {
	t.Parallel()
	_, l, ev := startProxy(t, "tcp", nil, nil)
	resp, err := http.Get("http://" + l.Addr().String() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(ev.list()) != 0 {
		t.Errorf("answered %s, reported %v", resp.Status, ev.list())
	}
}

// TestMaxConnsAndClose: beyond MaxConns a client is answered 503; Close
// ends an open tunnel.
func TestMaxConnsAndClose(t *testing.T) {
	t.Parallel()
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	g, err := netguard.New(netguard.Options{AllowHosts: []string{"echo.test"}, Resolver: names{"echo.test": "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Guard: g, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	c, br, resp := connect(t, l, "echo.test:"+port)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first CONNECT answered %s", resp.Status)
	}
	_, _, resp2 := connect(t, l, "echo.test:"+port)
	if resp2.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second CONNECT over a cap of 1 answered %s, want 503", resp2.Status)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the tunnel is still open after Close")
	}
	c.Close()
}

// TestNeedsGuard: a proxy without a guard is an error, not a proxy that
// connects anywhere.
func TestNeedsGuard(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{}); err == nil {
		t.Error("New without a Guard succeeded")
	}
}
