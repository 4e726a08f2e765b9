package mcp

import (
	"net"
	"testing"
)

// TestAuthority: the Host and Origin headers that name the server — its
// own names on the port the request came in on, configured hosts (any port,
// or the one given) and configured origins — and those that do not.
func TestAuthority(t *testing.T) {
	t.Parallel()
	a := newAuthority(HTTPOptions{Addr: "127.0.0.1:7420", AllowedHosts: []string{"Tools.Example.com", "proxy.example:8443", "[::2]:9000"},
		AllowedOrigins: []string{"http://localhost:3000/", "HTTPS://App.Example:443"}})
	on := func(port int) net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port} }
	for _, tc := range []struct {
		host  string
		local net.Addr
		ok    bool
	}{
		{"127.0.0.1:7420", on(7420), true},
		{"LOCALHOST:7420", on(7420), true},
		{"[::1]:7420", on(7420), true},
		{"localhost:8080", on(7420), false},
		{"localhost", on(7420), false},     // port 80
		{"localhost:5555", on(5555), true}, // the port it listens on, whatever Addr said
		{"localhost:7420", nil, true},      // no connection to ask: Addr's port
		{"tools.example.com:1234", on(7420), true},
		{"tools.example.com", on(7420), true},
		{"proxy.example:8443", on(7420), true},
		{"proxy.example:8444", on(7420), false},
		{"proxy.example", on(7420), false},
		{"[::2]:9000", on(7420), true},
		{"evil.example:7420", on(7420), false},
	} {
		if got := a.host(tc.host, "80", tc.local); got != tc.ok {
			t.Errorf("host(%q on %v) = %v", tc.host, tc.local, got)
		}
	}
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"http://127.0.0.1:7420", true},
		{"http://localhost:7420/", true},
		{"https://localhost:7420", true}, // the same port: only this server can answer there
		{"http://localhost:3000", true},
		{"http://LOCALHOST:3000", true},
		{"http://localhost:3001", false},
		{"http://localhost", false},
		{"https://app.example", true},
		{"https://app.example:443", true},
		{"http://app.example", false},
		{"https://tools.example.com", true},
		{"https://proxy.example:8443", true},
		{"https://proxy.example", false},
		{"http://127.0.0.1:7421", false},
		{"null", false},
		{"file://", false},
		{"http://user@localhost:7420", false},
		{"http://localhost:7420/page", false},
	} {
		if got := a.origin(tc.origin, on(7420)); got != tc.ok {
			t.Errorf("origin(%q) = %v", tc.origin, got)
		}
	}
	// On a wildcard address the machine's own addresses are its names too.
	wild := newAuthority(HTTPOptions{Addr: "0.0.0.0:7420"})
	if !wild.host("127.0.0.1:7420", "80", on(7420)) || wild.host("127.0.0.1:7421", "80", on(7420)) {
		t.Error("a wildcard listener: its own addresses count on its own port only")
	}
}
