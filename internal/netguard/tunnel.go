package netguard

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// tunnel connects to target ("ip:port", an address the guard checked)
// through an http:// proxy with CONNECT. The proxy is handed the checked
// address, never the name, so it has nothing to resolve and a rebinding DNS
// server nothing to rebind; TLS to the site then runs inside the tunnel with
// the site's own name, as without a proxy.
func (g *Guard) tunnel(ctx context.Context, network string, proxy *url.URL, target, userAgent string) (net.Conn, error) {
	if proxy.Scheme != "http" {
		return nil, fmt.Errorf("the proxy %s is a %s proxy: %s tunnels only through http:// proxies (set HTTP_PROXY/HTTPS_PROXY to one, or NO_PROXY for this host)", proxy.Redacted(), proxy.Scheme, g.name)
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
		return nil, fmt.Errorf("the proxy %s refused a tunnel to %s: %s (%s asks proxies for CONNECT tunnels to checked addresses; the proxy must allow CONNECT to that port)", proxy.Redacted(), target, StatusText(resp.StatusCode), g.name)
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

// StatusText is "404 Not Found": the code and its standard text, never the
// reason phrase the server chose (text from outside, shown unwrapped).
func StatusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return strconv.Itoa(code)
}
