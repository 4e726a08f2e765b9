package netguard

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"time"
)

// Transport sends requests only to addresses the guard checked: one
// http.Transport per scheme, so the dialer knows which proxy variable
// applies, and a refusal for any scheme but http and https. Its transports'
// Proxy stays nil: a proxy is used only through the guard's tunnel to a
// checked address, never handed a name to resolve.
type Transport map[string]*http.Transport

// NewTransport returns the guarded transport of g. userAgent is sent to
// proxies, headerTimeout bounds the wait for response headers, and rootCAs
// (nil: the system's) verify TLS servers.
func (g *Guard) NewTransport(userAgent string, headerTimeout time.Duration, rootCAs *x509.CertPool) Transport {
	t := Transport{}
	for _, scheme := range []string{"http", "https"} {
		t[scheme] = &http.Transport{
			DialContext:            g.Dialer(scheme, userAgent),
			Proxy:                  nil,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  headerTimeout,
			MaxResponseHeaderBytes: 64 << 10,
		}
		if rootCAs != nil {
			t[scheme].TLSClientConfig = &tls.Config{RootCAs: rootCAs, MinVersion: tls.VersionTLS12}
		}
	}
	return t
}

// RoundTrip sends req through the transport of its scheme.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if tr, ok := t[strings.ToLower(req.URL.Scheme)]; ok {
		return tr.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, Refuse(req.URL.Redacted(), "the scheme %q is not allowed: only http and https URLs can be fetched", req.URL.Scheme)
}

// CloseIdleConnections closes the idle connections of every scheme.
func (t Transport) CloseIdleConnections() {
	for _, tr := range t {
		tr.CloseIdleConnections()
	}
}
