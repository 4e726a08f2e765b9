package client

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/config"
)

// LoginOptions configure Login.
type LoginOptions struct {
	// Tokens keeps the grant (required).
	Tokens TokenStore
	// Show takes the person to the sign-in page at url: it opens a browser,
	// or prints the URL for the person to open (required).
	Show func(url string) error
	// Version is the client version sent to the server ("dev").
	Version string
	// Device, when set, signs in with the device authorization grant (RFC
	// 8628) where the authorization server offers it: it shows the person
	// the page to open on any device and the code to enter there (no
	// redirect to this machine's loopback address is needed). Elsewhere
	// Show's URL is used.
	Device func(DeviceCode) error
	// Logger hears of redirects ignored (slog.Default() when nil).
	Logger *slog.Logger
}

// Login signs in to the imported server name, configured by srv, with the
// authorization code flow: the server's 401 names the authorization
// server, the person signs in on the page Show is given, the
// authorization server redirects back to a listener on the loopback
// address (http://127.0.0.1:PORT/callback, PORT srv.OAuth.RedirectPort or
// any free one; a redirect naming another sign-in's state is ignored), and
// the grant is kept in o.Tokens, replacing the one kept before. A server that lets Toolbelt in without a sign-in is an error.
func Login(ctx context.Context, name string, srv config.MCPServer, o LoginOptions) error {
	if srv.OAuth == nil || srv.Transport() != config.TransportHTTP {
		return fmt.Errorf("%s has no oauth entry for an HTTP server in toolbelt.yaml: nothing to sign in to", name)
	}
	h, err := newOAuth(name, srv.OAuth, OAuthOptions{Resource: srv.URL, Tokens: o.Tokens, Show: o.Show, Device: o.Device, Logger: o.Logger})
	if err != nil {
		return err
	}
	h.fresh = true
	hc, pool, err := httpClient(srv)
	if err != nil {
		return err
	}
	defer pool.CloseIdleConnections()
	t := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, OAuthHandler: h, DisableStandaloneSSE: true}
	impl := &mcp.Implementation{Name: "toolbelt", Version: cmp.Or(o.Version, "dev")}
	sess, err := mcp.NewClient(impl, nil).Connect(ctx, t, nil)
	if err == nil {
		_, err = sess.ListTools(ctx, nil)
		sess.Close()
	}
	if err != nil {
		return fmt.Errorf("signing in to %s: %w", name, err)
	}
	if !h.signedIn {
		return fmt.Errorf("%s let Toolbelt in without a sign-in: it needs no oauth entry", name)
	}
	return nil
}

// loopback is the listener on the loopback address that the
// authorization server redirects the person's browser back to, with the
// code of one sign-in.
type loopback struct {
	redirect string
	srv      *http.Server
	results  chan callback

	mu    sync.Mutex
	state string // the state of the sign-in waited for
}

// callback is what the authorization server's redirect brought back.
type callback struct {
	code, iss string
	err       error
}

// listenLoopback listens on 127.0.0.1:port (any free port when 0) for the
// redirect of server name's sign-in; log hears of redirects ignored.
func listenLoopback(name string, port int, log *slog.Logger) (*loopback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listening for the sign-in's redirect: %w", err)
	}
	l := &loopback{redirect: fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port), results: make(chan callback, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) { l.serve(w, r, name, log) })
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln)
	return l, nil
}

// expect sets the state of the sign-in the redirect must name.
func (l *loopback) expect(state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state = state
}

// serve answers a redirect to /callback: one naming the sign-in's state
// passes its code (or its error) on, once, and tells the person the
// browser window can be closed; one naming another state (a stale tab, or
// a page trying to end the sign-in) is ignored and logged, and the
// sign-in goes on waiting.
func (l *loopback) serve(w http.ResponseWriter, r *http.Request, name string, log *slog.Logger) {
	q := r.URL.Query()
	l.mu.Lock()
	want := l.state
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if want == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(want)) != 1 {
		log.Warn("a sign-in redirect for another sign-in was ignored: still waiting", "server", name)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>Toolbelt</title><p>%s</p>\n", html.EscapeString("This is not the sign-in to "+name+" Toolbelt is waiting for: it was ignored."))
		return
	}
	var c callback
	msg := "Signed in to " + name + ". You can close this window."
	if e := q.Get("error"); e != "" {
		c.err = fmt.Errorf("the authorization server refused the sign-in: %s %s", e, q.Get("error_description"))
		msg = "The sign-in to " + name + " failed: " + e + ". You can close this window."
	} else if q.Get("code") == "" {
		c.err = errors.New("the authorization server's redirect has no code")
	} else {
		c.code, c.iss = q.Get("code"), q.Get("iss")
	}
	select {
	case l.results <- c:
	default: // a second redirect: the first one counts
	}
	fmt.Fprintf(w, "<!doctype html><title>Toolbelt</title><p>%s</p>\n", html.EscapeString(msg))
}

// wait returns the code and issuer the redirect of the sign-in brought
// back.
func (l *loopback) wait(ctx context.Context) (code, iss string, err error) {
	select {
	case c := <-l.results:
		return c.code, c.iss, c.err
	case <-ctx.Done():
		return "", "", fmt.Errorf("waiting for the sign-in: %w", ctx.Err())
	}
}

// close stops listening.
func (l *loopback) close() { l.srv.Close() }
