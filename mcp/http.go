package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/internal/jsonscan"
)

// HTTPOptions secure and bound the streamable HTTP endpoint.
type HTTPOptions struct {
	// Addr is the address the server listens on; its host is one of the
	// server's own names in the Host and Origin headers. Their port must be
	// the one a request came in on (Addr's, when the connection does not
	// say).
	Addr string
	// Token, when set, is a bearer token clients may send; its principal is
	// "token", and it is the owner as Options.Owner says.
	Token string
	// Tokens are bearer tokens, each mapped to a principal and an owner
	// flag. When Token or Tokens are set, every request must carry one of
	// them; a session stays bound to the principal that opened it.
	Tokens []Token
	// OAuth, when set, also accepts bearer JWTs of an authorization server
	// (see [OAuth]); a request without an accepted token gets 401 naming
	// the protected-resource metadata.
	OAuth *OAuth
	// AllowedHosts adds to the names requests may use in their Host header
	// ("tools.example.com", any port; "tools.example.com:8443", that port
	// only). The server's own names — loopback names, the listen address's
	// host — are allowed on its own port only.
	AllowedHosts []string
	// AllowedOrigins adds to the origins a browser's request may come from
	// ("http://localhost:3000"). Without it only the server's own origin
	// (a name the Host header may use, on the server's own port) is
	// allowed.
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body (default 4 MiB); MaxJSONDepth its
	// nesting (default 64).
	MaxBodyBytes int64
	MaxJSONDepth int
	// MaxSessions bounds the sessions open at once (default 256); a client
	// that would open one more gets 503 with a JSON-RPC error saying so.
	MaxSessions int
	// SessionIdleTimeout closes a session that has had no request for that
	// long (default 15 minutes).
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds reading one request body (default 30s): a client
	// that sends it slower gets 408 and the connection is closed.
	BodyTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (default 10s);
	// MaxConnections the connections open at once (default 512). Both
	// apply through HTTPServer and LimitListener.
	ReadHeaderTimeout time.Duration
	MaxConnections    int
}

// Token is a bearer token and who it stands for.
type Token struct {
	// Token is the secret the client sends.
	Token string
	// Principal names who the token stands for; it is recorded with each
	// call in the audit log.
	Principal string
	// Owner says the principal is the owner (owner-only tools are offered).
	Owner bool
}

// Defaults of HTTPOptions.
const (
	DefaultMaxBodyBytes       = 4 << 20
	DefaultMaxJSONDepth       = 64
	DefaultMaxSessions        = 256
	DefaultSessionIdleTimeout = 15 * time.Minute
	DefaultBodyTimeout        = 30 * time.Second
	DefaultReadHeaderTimeout  = 10 * time.Second
	DefaultMaxConnections     = 512
	// DefaultAddr is where `toolbelt serve` listens.
	DefaultAddr = "127.0.0.1:7420"
	// connIdleTimeout closes a kept-alive connection with no request.
	connIdleTimeout = 2 * time.Minute
)

func (o HTTPOptions) withDefaults() HTTPOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.SessionIdleTimeout, DefaultSessionIdleTimeout)
	def(&o.BodyTimeout, DefaultBodyTimeout)
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = DefaultMaxJSONDepth
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	return o
}

// HTTPServer returns an http.Server for h with the header and idle
// timeouts of o. It sets no overall read or write timeout, which would cut
// long calls and event streams; bodies are bounded by the handler.
func (o HTTPOptions) HTTPServer(h http.Handler) *http.Server {
	o = o.withDefaults()
	return &http.Server{Handler: h, ReadHeaderTimeout: o.ReadHeaderTimeout, IdleTimeout: connIdleTimeout}
}

// CheckListen refuses to serve on an address other machines can reach
// without a bearer token.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if isLoopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without a bearer token: other machines could call the tools. "+
		"Set mcp.token or mcp.tokens in toolbelt.yaml, or TOOLBELT_MCP_TOKEN, or listen on 127.0.0.1", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Handler serves the MCP streamable HTTP transport, behind checks that come
// first: the Host and Origin headers must name this server (DNS-rebinding
// protection), the bearer token must be one of the configured ones when any
// is set (compared in constant time), the body must arrive within the body
// timeout and fit the size and nesting limits, and a new session must fit
// under the session cap. Idle sessions are closed after the idle timeout.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	o = o.withDefaults()
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Logger:                       s.opts.Logger,
		MaxRequestBodyBytes:          o.MaxBodyBytes,
		PropagateRequestCancellation: true,
		SessionTimeout:               o.SessionIdleTimeout,
	})
	own := newAuthority(o)
	tokens := o.Tokens
	if o.Token != "" {
		tokens = append([]Token{{Token: o.Token, Principal: "token", Owner: s.opts.Owner}}, tokens...)
	}
	keys := newTokenKeys(tokens)
	authn := &authenticator{keys: keys, oauth: o.OAuth}
	if o.OAuth != nil {
		authn.jwt = &jwtVerifier{o: o.OAuth}
	}
	gate := &sessionGate{srv: s, max: o.MaxSessions, idle: o.SessionIdleTimeout}
	var next http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Method == http.MethodPost {
			body, ok := readBody(w, r, o)
			if !ok {
				return
			}
			if isBatch(body) {
				writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, batchRefused("request"))
				return
			}
			body = liftTaskBody(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			gate.serveNew(w, r, inner)
			return
		}
		inner.ServeHTTP(w, r)
	})
	if !authn.open() {
		// The SDK binds each session to the principal (TokenInfo.UserID)
		// that opened it, so another token cannot use it. The token was
		// checked before (authenticate): its TokenInfo is in the context.
		next = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
			return ctx.Value(tokenInfoKey{}).(*auth.TokenInfo), nil
		}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	}
	return own.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authn.open() {
			info, ok := authn.authenticate(w, r)
			if !ok {
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), tokenInfoKey{}, info))
		}
		next.ServeHTTP(w, r)
	}))
}

// tokenInfoKey holds, in a request's context, the TokenInfo of its checked
// bearer token.
type tokenInfoKey struct{}

// authenticator checks a request's bearer token: one of the static tokens,
// else a JWT of the OAuth issuer.
type authenticator struct {
	keys  *tokenKeys
	oauth *OAuth
	jwt   *jwtVerifier
}

// open says no token is needed.
func (a *authenticator) open() bool { return len(a.keys.tokens) == 0 && a.jwt == nil }

// authenticate returns who r's token stands for, or answers r with 401 (no
// token, or one not accepted) or 403 (a JWT with none of the advertised
// scopes) and returns false.
func (a *authenticator) authenticate(w http.ResponseWriter, r *http.Request) (*auth.TokenInfo, bool) {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if t, known := a.keys.find(got); ok && known {
		return &auth.TokenInfo{UserID: t.Principal, Extra: map[string]any{ownerKey: t.Owner}}, true
	}
	if a.jwt == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolbelt"`)
		http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
		return nil, false
	}
	meta := fmt.Sprintf("resource_metadata=%q", a.oauth.metadataURL())
	if !ok || got == "" {
		w.Header().Set("WWW-Authenticate", "Bearer "+meta+scopeParam(a.oauth.Scopes))
		http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
		return nil, false
	}
	info, err := a.jwt.verify(r.Context(), got)
	switch {
	case errors.Is(err, errInsufficientScope):
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", `+meta+scopeParam(a.oauth.Scopes))
		http.Error(w, "forbidden: the token has none of the scopes this server accepts", http.StatusForbidden)
		return nil, false
	case err != nil:
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", `+meta)
		http.Error(w, "unauthorized: the bearer token is not valid here", http.StatusUnauthorized)
		return nil, false
	}
	return info, true
}

// scopeParam is the WWW-Authenticate scope parameter for scopes, after a
// comma; empty without scopes.
func scopeParam(scopes []string) string {
	if len(scopes) == 0 {
		return ""
	}
	return fmt.Sprintf(", scope=%q", strings.Join(scopes, " "))
}

// Guard returns h behind the checks Handler makes first: the Host and
// Origin headers must name this server (DNS-rebinding protection), as o's
// Addr, AllowedHosts and AllowedOrigins say. Other handlers the same server
// serves (the console) use it.
func (o HTTPOptions) Guard(h http.Handler) http.Handler { return newAuthority(o).guard(h) }

// guard answers 403 to a request whose Host or Origin header does not name
// this server, and passes the others to next.
func (a *authority) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		def := "80"
		if r.TLS != nil {
			def = "443"
		}
		if !a.host(r.Host, def, local) {
			http.Error(w, "forbidden: the Host header does not name this server (its name and port; mcp.allowedHosts adds names)", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !a.origin(origin, local) {
			http.Error(w, "forbidden: requests from this origin are not allowed: only the server's own origin and those in mcp.allowedOrigins are", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads a POST body within the body timeout and the size and
// nesting limits; on failure it has answered the request.
func readBody(w http.ResponseWriter, r *http.Request, o HTTPOptions) ([]byte, bool) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(o.BodyTimeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, o.MaxBodyBytes+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The deadline stays: the rest of the body is not waited for, and
		// the connection is closed after the answer.
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("request body not received within %s (mcp.bodyTimeout)", o.BodyTimeout), http.StatusRequestTimeout)
		return nil, false
	case err != nil:
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return nil, false
	case int64(len(body)) > o.MaxBodyBytes:
		http.Error(w, fmt.Sprintf("request body larger than %d bytes (mcp.maxMessageBytes)", o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return nil, false
	case !utf8.Valid(body):
		// As on stdio: JSON decoding would turn the bad bytes into U+FFFD
		// silently, and a tool would get arguments the client never sent.
		http.Error(w, fmt.Sprintf("request body is not valid UTF-8 (first bad byte at offset %d)", firstInvalid(body)), http.StatusBadRequest)
		return nil, false
	case jsonscan.Deeper(body, o.MaxJSONDepth):
		http.Error(w, fmt.Sprintf("request JSON nested deeper than %d levels", o.MaxJSONDepth), http.StatusBadRequest)
		return nil, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

// ownerKey holds, in a token's TokenInfo.Extra, whether its principal is the
// owner.
const ownerKey = "toolbelt.owner"

// tokenKeys finds the configured token a client sent, comparing hashes in
// constant time against every token.
type tokenKeys struct {
	sums   [][32]byte
	tokens []Token
}

func newTokenKeys(tokens []Token) *tokenKeys {
	k := &tokenKeys{tokens: tokens}
	for _, t := range tokens {
		k.sums = append(k.sums, sha256.Sum256([]byte(t.Token)))
	}
	return k
}

func (k *tokenKeys) find(got string) (Token, bool) {
	sum := sha256.Sum256([]byte(got))
	found := -1
	for i := range k.sums {
		if subtle.ConstantTimeCompare(sum[:], k.sums[i][:]) == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 || got == "" {
		return Token{}, false
	}
	return k.tokens[found], true
}

// sessionGate keeps the number of sessions under the cap: a request that
// would open a session is refused when the sessions open, plus those being
// opened, reach it.
type sessionGate struct {
	srv     *Server
	max     int
	idle    time.Duration
	mu      sync.Mutex
	opening int
}

func (g *sessionGate) serveNew(w http.ResponseWriter, r *http.Request, inner http.Handler) {
	g.mu.Lock()
	// Sessions whose initialization failed (a probe for a newer protocol
	// version, say) are closed by the SDK at once, but leave the list only
	// a moment later: they do not count.
	open := 0
	for ss := range g.srv.sdk.Sessions() {
		if ss.InitializeParams() != nil {
			open++
		}
	}
	if open+g.opening >= g.max {
		g.mu.Unlock()
		g.srv.opts.Logger.Warn("refused a new MCP session: the session cap is reached", "sessions", open, "max", g.max)
		w.Header().Set("Retry-After", "60")
		msg := fmt.Sprintf("too many MCP sessions: %d are open, the limit is %d (mcp.maxSessions). Close sessions you do not use (HTTP DELETE); idle ones close after %s (mcp.sessionIdleTimeout).", open, g.max, g.idle)
		writeRPCError(w, http.StatusServiceUnavailable, -32000, msg)
		return
	}
	g.opening++
	g.mu.Unlock()
	// The new session is among the server's sessions by the time the
	// response starts, so it stops counting as opening then — before the
	// client can send its next request.
	rw := &startWriter{ResponseWriter: w}
	rw.started = func() {
		g.mu.Lock()
		g.opening--
		g.mu.Unlock()
	}
	defer rw.start()
	inner.ServeHTTP(rw, r)
}

// startWriter calls started once, when the response starts.
type startWriter struct {
	http.ResponseWriter
	once    sync.Once
	started func()
}

func (w *startWriter) start() { w.once.Do(w.started) }

func (w *startWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *startWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (w *startWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *startWriter) Flush() {
	w.start()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// LimitListener returns a listener that keeps at most max connections open
// (DefaultMaxConnections when max <= 0). A connection over the limit is
// answered with 503 and closed at once, so a client learns why instead of
// waiting.
func LimitListener(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	return &limitListener{Listener: ln, slots: make(chan struct{}, max)}
}

type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go refuse(c, cap(l.slots))
		}
	}
}

// refuse answers a connection over the limit and closes it.
func refuse(c net.Conn, max int) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	msg := fmt.Sprintf("too many connections: the limit is %d (mcp.maxConnections)\n", max)
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s", len(msg), msg)
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// authority says which Host and Origin headers name this server.
type authority struct {
	// names are the server's own names: loopback names, the listen
	// address's host, and on a wildcard address the machine's names and
	// addresses. They count on the server's own port only.
	names map[string]bool
	// hosts are the configured names, with their port or "" for any.
	hosts map[hostPort]bool
	// origins are the configured origins, normalized.
	origins map[string]bool
	// port is the listen address's port, for a request whose connection
	// does not say which port it came in on.
	port string
}

type hostPort struct{ name, port string }

func newAuthority(o HTTPOptions) *authority {
	a := &authority{names: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}, hosts: map[hostPort]bool{}, origins: map[string]bool{}}
	host, port, err := net.SplitHostPort(o.Addr)
	if err == nil {
		a.port = port
		if host != "" {
			a.names[strings.ToLower(host)] = true
		}
	}
	if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		if name, err := os.Hostname(); err == nil {
			a.names[strings.ToLower(name)] = true
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, addr := range addrs {
				if ipnet, ok := addr.(*net.IPNet); ok {
					a.names[ipnet.IP.String()] = true
				}
			}
		}
	}
	for _, h := range o.AllowedHosts {
		name, port := splitHost(h, "")
		a.hosts[hostPort{name, port}] = true
	}
	for _, origin := range o.AllowedOrigins {
		if n, ok := normalOrigin(origin); ok {
			a.origins[n] = true
		}
	}
	return a
}

// host reports whether hostport — a Host header, or an origin's host —
// names this server: one of its own names on the port the request came in
// on (local), or a configured name. def is the port hostport means when it
// names none.
func (a *authority) host(hostport, def string, local net.Addr) bool {
	name, port := splitHost(hostport, def)
	if a.hosts[hostPort{name, ""}] || a.hosts[hostPort{name, port}] {
		return true
	}
	own := a.port
	if tcp, ok := local.(*net.TCPAddr); ok {
		own = strconv.Itoa(tcp.Port)
	}
	return a.names[name] && own != "" && port == own
}

// origin reports whether a browser's Origin header is this server's own
// origin or a configured one. Another port of the same machine is another
// origin: a page a local dev server (or any local program) serves must not
// drive the tools.
func (a *authority) origin(origin string, local net.Addr) bool {
	n, ok := normalOrigin(origin)
	if !ok {
		return false
	}
	if a.origins[n] {
		return true
	}
	scheme, host, _ := strings.Cut(n, "://")
	def := "80"
	if scheme == "https" {
		def = "443"
	}
	return a.host(host, def, local)
}

// normalOrigin returns an origin as scheme://host[:port], lowercased,
// without a default port or a trailing slash; false when it is not an
// http or https origin.
func normalOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if p := u.Port(); (scheme == "http" && p == "80") || (scheme == "https" && p == "443") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return scheme + "://" + host, true
}

// splitHost returns the lowercased name of a host[:port] (without
// brackets) and its port, or def when it names none.
func splitHost(hostport, def string) (name, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h), p
	}
	return strings.ToLower(strings.Trim(hostport, "[]")), def
}

// isBatch reports whether a body is a JSON-RPC batch: a JSON array.
func isBatch(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '['
}

// batchRefused is what a JSON-RPC batch is answered with (-32600), on
// stdio and HTTP alike: the MCP revisions this server speaks (2025-06-18
// and later) have no batches.
func batchRefused(per string) string {
	return "JSON-RPC batches are not supported (MCP removed them in its 2025-06-18 revision): send one message per " + per
}

// writeRPCError answers an HTTP request with status and a JSON-RPC error
// without an id.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(rpcError(nil, code, msg), '\n'))
}
