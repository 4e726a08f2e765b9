// Package netproxy is a filtering forward proxy: HTTP CONNECT tunnels and
// plain HTTP requests (absolute URIs), each let through only when an allow
// function agrees to its host and port, and connected only through a
// netguard.Guard, so private and special addresses are refused after
// resolution whatever the allow function said. Every host reached or
// refused is reported to a callback (for the audit). The sandbox's commands
// and the browser reach the network through it; MatchDomain is the
// `domain:` pattern both and the policy's rules use.
package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/internal/netguard"
)

// Defaults for Options left zero.
const (
	DefaultMaxConns    = 256
	DefaultDialTimeout = 30 * time.Second
	DefaultIdleTimeout = 5 * time.Minute
)

// Event is one host asked for through the proxy: reached, or not and why.
type Event struct {
	// Host and Port are as the client asked for them.
	Host, Port string
	// Refused is true when the allow function or the guard said no (Err
	// says why), false when the host was reached or could not be (Err).
	Refused bool
	// Err is nil when the host was reached.
	Err error
}

// Options configure a Proxy. Guard is required.
type Options struct {
	// Guard connects to every host, after its own checks.
	Guard *netguard.Guard
	// Allow decides whether host (as the client spelled it) may be
	// reached on port: nil to allow, or an error whose text is the reason
	// the client is told. A nil Allow allows every host the guard does.
	Allow func(ctx context.Context, host, port string) error
	// Report, when set, is told of every host reached or refused. It is
	// called from the connection's goroutine and must not block long.
	Report func(Event)
	// MaxConns caps the tunnels and requests in flight at once (default
	// DefaultMaxConns); beyond it a client is answered 503.
	MaxConns int
	// DialTimeout bounds a connection to a host (default DefaultDialTimeout).
	DialTimeout time.Duration
	// IdleTimeout closes a tunnel or idle client connection with no
	// traffic for this long (default DefaultIdleTimeout).
	IdleTimeout time.Duration
}

// Proxy is a filtering forward proxy; serve it on a listener with Serve
// and stop it with Close.
type Proxy struct {
	o      Options
	slots  chan struct{}
	server *http.Server
	rp     *httputil.ReverseProxy
	tr     *http.Transport

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// New returns a Proxy for o.
func New(o Options) (*Proxy, error) {
	if o.Guard == nil {
		return nil, errors.New("netproxy: Options.Guard is required: the proxy connects only through the guard")
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	p := &Proxy{o: o, slots: make(chan struct{}, o.MaxConns), tunnels: map[net.Conn]struct{}{}}
	p.tr = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		ResponseHeaderTimeout:  o.DialTimeout,
		IdleConnTimeout:        o.IdleTimeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	// The outgoing request is the client's, to its absolute URI. Rewrite
	// (not Director) keeps the client's address out of X-Forwarded-For;
	// ReverseProxy drops the hop-by-hop headers, Proxy-Authorization among
	// them, both ways.
	p.rp = &httputil.ReverseProxy{
		Rewrite:      func(*httputil.ProxyRequest) {},
		Transport:    reporting{p},
		ErrorHandler: p.badGateway,
	}
	p.server = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: o.DialTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	return p, nil
}

// Serve accepts clients on l (TCP or a unix socket) until Close; it
// returns http.ErrServerClosed after Close.
func (p *Proxy) Serve(l net.Listener) error {
	return p.server.Serve(l)
}

// Close stops the listeners, closes every client connection and tunnel,
// and waits for the tunnels' goroutines to end.
func (p *Proxy) Close() error {
	err := p.server.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.tr.CloseIdleConnections()
	return err
}

// ServeHTTP answers one request from a client: a CONNECT is a tunnel,
// anything else a request forwarded to its absolute URI.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		http.Error(w, fmt.Sprintf("the proxy is at its limit of %d connections at once; retry later", p.o.MaxConns), http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "this is a proxy: send an absolute http:// URI, or CONNECT host:port for anything else", http.StatusBadRequest)
		return
	}
	host, port := r.URL.Hostname(), portOf(r)
	if err := p.check(r.Context(), host, port); err != nil {
		p.refuse(w, host, port, err)
		return
	}
	p.rp.ServeHTTP(w, r)
}

// check asks the allow function, then the guard, about host and port.
func (p *Proxy) check(ctx context.Context, host, port string) error {
	if p.o.Allow != nil {
		if err := p.o.Allow(ctx, host, port); err != nil {
			return err
		}
	}
	return p.o.Guard.CheckHost(host, port)
}

// refuse answers 403 with the reason and reports the refusal.
func (p *Proxy) refuse(w http.ResponseWriter, host, port string, err error) {
	p.report(Event{Host: host, Port: port, Refused: true, Err: err})
	http.Error(w, "refused by the proxy: "+reason(err), http.StatusForbidden)
}

func (p *Proxy) report(e Event) {
	if p.o.Report != nil {
		p.o.Report(e)
	}
}

// reason is err's text without a Refusal's "refused: " prefix.
func reason(err error) string {
	var r *netguard.Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return err.Error()
}

// dial connects through the guard, bounded by DialTimeout.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.o.DialTimeout)
	defer cancel()
	return p.o.Guard.Dialer("http", "")(ctx, network, addr)
}

// reporting is the forwarding transport, reporting each request's host.
type reporting struct{ p *Proxy }

func (t reporting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.p.tr.RoundTrip(r)
	var ref *netguard.Refusal
	t.p.report(Event{Host: r.URL.Hostname(), Port: portOf(r), Refused: errors.As(err, &ref), Err: err})
	return resp, err
}

func portOf(r *http.Request) string {
	if p := r.URL.Port(); p != "" {
		return p
	}
	return "80"
}

// badGateway answers a forwarded request that failed: 403 when the guard
// refused the address the host resolved to, 502 otherwise.
func (p *Proxy) badGateway(w http.ResponseWriter, r *http.Request, err error) {
	var ref *netguard.Refusal
	if errors.As(err, &ref) {
		http.Error(w, "refused by the proxy: "+ref.Reason, http.StatusForbidden)
		return
	}
	http.Error(w, "the proxy could not reach the host: "+err.Error(), http.StatusBadGateway)
}

// connect opens a tunnel to the CONNECT request's host:port.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, fmt.Sprintf("CONNECT needs host:port, got %q", r.Host), http.StatusBadRequest)
		return
	}
	if err := p.check(r.Context(), host, port); err != nil {
		p.refuse(w, host, port, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.o.DialTimeout)
	up, err := p.o.Guard.Dialer("https", "")(ctx, "tcp", r.Host)
	cancel()
	var ref *netguard.Refusal
	p.report(Event{Host: host, Port: port, Refused: errors.As(err, &ref), Err: err})
	switch {
	case ref != nil:
		http.Error(w, "refused by the proxy: "+ref.Reason, http.StatusForbidden)
		return
	case err != nil:
		http.Error(w, "the proxy could not reach the host: "+err.Error(), http.StatusBadGateway)
		return
	}
	down, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down, up) {
		return
	}
	defer p.untrack(down, up)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	p.pipe(down, brw.Reader, up)
}

// track registers a tunnel's two connections so that Close ends them; it
// closes them and returns false when the proxy is closed already.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = struct{}{}
	}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.tunnels, c)
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Done()
}

// pipe copies both ways between the client (down, whose buffered reader
// may hold bytes already read) and the host (up) until both directions
// end or one stays idle for IdleTimeout.
func (p *Proxy) pipe(down net.Conn, downR *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	copyHalf := func(dst net.Conn, src io.Reader, srcConn net.Conn) {
		io.Copy(dst, idleReader{r: src, c: srcConn, idle: p.o.IdleTimeout})
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go copyHalf(up, downR, down)
	go copyHalf(down, up, up)
	<-done
	<-done
}

// idleReader reads from r, failing when nothing arrives on c for idle.
type idleReader struct {
	r    io.Reader
	c    net.Conn
	idle time.Duration
}

func (i idleReader) Read(b []byte) (int, error) {
	i.c.SetReadDeadline(time.Now().Add(i.idle))
	return i.r.Read(b)
}
