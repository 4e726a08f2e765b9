package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/auth"
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
}

// Login signs in to the imported server name, configured by srv, with the
// authorization code flow: the server's 401 names the authorization
// server, the person signs in on the page Show is given, the
// authorization server redirects back to a listener on the loopback
// address (http://127.0.0.1:PORT/callback, PORT srv.OAuth.RedirectPort or
// any free one), and the grant is kept in o.Tokens, replacing the one kept
// before. A server that lets Toolbelt in without a sign-in is an error.
func Login(ctx context.Context, name string, srv config.MCPServer, o LoginOptions) error {
	if srv.OAuth == nil || srv.Transport() != config.TransportHTTP {
		return fmt.Errorf("%s has no oauth entry for an HTTP server in toolbelt.yaml: nothing to sign in to", name)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.OAuth.RedirectPort)))
	if err != nil {
		return fmt.Errorf("listening for the sign-in's redirect: %w", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	results := make(chan callback, 1)
	back := &http.Server{Handler: callbackHandler(name, results)}
	go back.Serve(ln)
	defer back.Close()
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if err := o.Show(args.URL); err != nil {
			return nil, err
		}
		select {
		case r := <-results:
			return r.result, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the sign-in: %w", ctx.Err())
		}
	}
	h, err := newOAuth(name, srv.OAuth, OAuthOptions{Resource: srv.URL, Tokens: o.Tokens, Fetch: fetch, RedirectURL: redirect})
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

// callback is what the authorization server's redirect brought back.
type callback struct {
	result *auth.AuthorizationResult
	err    error
}

// callbackHandler answers the redirect to /callback: it passes its code
// and state (or its error) to results, once, and tells the person the
// browser window can be closed.
func callbackHandler(name string, results chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var c callback
		msg := "Signed in to " + name + ". You can close this window."
		if e := q.Get("error"); e != "" {
			c.err = fmt.Errorf("the authorization server refused the sign-in: %s %s", e, q.Get("error_description"))
			msg = "The sign-in to " + name + " failed: " + e + ". You can close this window."
		} else if q.Get("code") == "" {
			c.err = errors.New("the authorization server's redirect has no code")
		} else {
			c.result = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		}
		select {
		case results <- c:
		default: // a second redirect: the first one counts
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Toolbelt</title><p>%s</p>\n", html.EscapeString(msg))
	})
	return mux
}
