package mcp

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions secure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Addr is the address the server listens on; its host is allowed in the
	// Host and Origin headers.
	Addr string
	// Token, when set, is the bearer token every request must carry.
	Token string
	// AllowedHosts and AllowedOrigins add to the names requests may use in
	// their Host and Origin headers; loopback names are always allowed.
	AllowedHosts   []string
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body (default 4 MiB); MaxJSONDepth its
	// nesting (default 64).
	MaxBodyBytes int64
	MaxJSONDepth int
}

// idleSession is how long an HTTP session may stay idle before it is closed.
const idleSession = 30 * time.Minute

// Defaults of HTTPOptions.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxJSONDepth = 64
	// DefaultAddr is where `toolbelt serve` listens.
	DefaultAddr = "127.0.0.1:7420"
)

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
		"Set mcp.token in toolbelt.yaml or TOOLBELT_MCP_TOKEN, or listen on 127.0.0.1", addr)
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
// protection), the bearer token must match when one is set (compared in
// constant time), and the body must fit the size and nesting limits.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = DefaultMaxJSONDepth
	}
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Logger:                       s.opts.Logger,
		MaxRequestBodyBytes:          o.MaxBodyBytes,
		PropagateRequestCancellation: true,
		SessionTimeout:               idleSession,
	})
	allowed := allowedHosts(o)
	origins := map[string]bool{}
	for _, origin := range o.AllowedOrigins {
		origins[strings.TrimSuffix(strings.ToLower(origin), "/")] = true
	}
	token := []byte(o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[hostOnly(r.Host)] {
			http.Error(w, "forbidden: the Host header does not name this server", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || !(allowed[hostOnly(u.Host)] || origins[strings.TrimSuffix(strings.ToLower(origin), "/")]) {
				http.Error(w, "forbidden: requests from this origin are not allowed", http.StatusForbidden)
				return
			}
		}
		if len(token) > 0 {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), token) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolbelt"`)
				http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
		}
		if r.Body != nil && r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, o.MaxBodyBytes+1))
			switch {
			case err != nil:
				http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
				return
			case int64(len(body)) > o.MaxBodyBytes:
				http.Error(w, fmt.Sprintf("request body larger than %d bytes", o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			case jsonDepth(body) > o.MaxJSONDepth:
				http.Error(w, fmt.Sprintf("request JSON nested deeper than %d levels", o.MaxJSONDepth), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		inner.ServeHTTP(w, r)
	})
}

// allowedHosts returns the host names requests may use: loopback names, the
// listen address, the machine's own names and addresses when listening on
// every interface, and the configured ones.
func allowedHosts(o HTTPOptions) map[string]bool {
	allowed := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	host, _, err := net.SplitHostPort(o.Addr)
	if err == nil && host != "" {
		allowed[strings.ToLower(strings.Trim(host, "[]"))] = true
	}
	if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		if name, err := os.Hostname(); err == nil {
			allowed[strings.ToLower(name)] = true
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipnet, ok := a.(*net.IPNet); ok {
					allowed[ipnet.IP.String()] = true
				}
			}
		}
	}
	for _, h := range o.AllowedHosts {
		allowed[strings.ToLower(h)] = true
	}
	return allowed
}

// hostOnly returns the host of a Host header, without port or brackets.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = host
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}

// jsonDepth returns the deepest nesting of objects and arrays in b, outside
// strings.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
