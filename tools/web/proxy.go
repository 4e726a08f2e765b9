package web

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// ProxyFunc picks the proxy for a request's URL, or nil to connect directly.
type ProxyFunc func(*url.URL) (*url.URL, error)

// proxyFromEnv reads the standard proxy variables (HTTP_PROXY, HTTPS_PROXY,
// NO_PROXY and their lowercase forms) through getenv. Loopback hosts and
// NO_PROXY matches connect directly, as net/http does.
func proxyFromEnv(getenv func(string) string) ProxyFunc {
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := getenv(k); v != "" {
				return v
			}
		}
		return ""
	}
	c := &httpproxy.Config{
		HTTPProxy:  first("HTTP_PROXY", "http_proxy"),
		HTTPSProxy: first("HTTPS_PROXY", "https_proxy"),
		NoProxy:    first("NO_PROXY", "no_proxy"),
		CGI:        getenv("REQUEST_METHOD") != "",
	}
	if c.HTTPProxy == "" && c.HTTPSProxy == "" {
		return nil
	}
	return c.ProxyFunc()
}

// tunnel connects to target ("ip:port", an address the guard checked)
// through an http:// proxy with CONNECT. The proxy is handed the checked
// address, never the name, so it has nothing to resolve and a rebinding DNS
// server nothing to rebind; TLS to the site then runs inside the tunnel with
// the site's own name, as without a proxy.
func (g *guard) tunnel(ctx context.Context, network string, proxy *url.URL, target, userAgent string) (net.Conn, error) {
	if proxy.Scheme != "http" {
		return nil, fmt.Errorf("the proxy %s is a %s proxy: web_fetch tunnels only through http:// proxies (set HTTP_PROXY/HTTPS_PROXY to one, or NO_PROXY for this host)", proxy.Redacted(), proxy.Scheme)
	}
	paddr := proxy.Host
	if proxy.Port() == "" {
		paddr = net.JoinHostPort(proxy.Hostname(), "80")
	}
	conn, err := g.dial(ctx, network, paddr)
	if err != nil {
		return nil, fmt.Errorf("connecting to the proxy %s: %w", proxy.Redacted(), err)
	}
	// The handshake with the proxy stops when the fetch does.
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	req.Header.Set("User-Agent", userAgent)
	if u := proxy.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	br := bufio.NewReader(conn)
	err = req.Write(conn)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, req)
	}
	if !stop() || err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("asking the proxy %s for a tunnel to %s: %w", proxy.Redacted(), target, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("the proxy %s refused a tunnel to %s: %s (web_fetch asks proxies for CONNECT tunnels to checked addresses; the proxy must allow CONNECT to that port)", proxy.Redacted(), target, statusText(resp.StatusCode))
	}
	conn.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn reads what the proxy sent after its answer before the rest.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
