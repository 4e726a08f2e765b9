package netguard

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/hostmatch"
)

func TestBlockedPublic(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e",
		"2002:808:808::1" /* 6to4 of 8.8.8.8 */, "64:ff9b::808:808" /* NAT64 of 8.8.8.8 */, "::ffff:8.8.8.8"} {
		if why := Blocked(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s is blocked: %s", s, why)
		}
	}
}

// FuzzHost checks that no host, however spelled, makes the guard panic, and
// that a host the guard lets through by its URL is never an address it
// would refuse to connect to.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f.1", "[::ffff:127.0.0.1]", "[2002:7f00:1::]", "example.com", "0177.1", "[fe80::1%25eth0]", "1.2.3.4.5"} {
		f.Add(s)
	}
	g, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string) {
		u, err := url.Parse("http://" + host + "/")
		if err != nil {
			return
		}
		if g.CheckURL(u) != nil {
			return
		}
		h := strings.ToLower(u.Hostname())
		if ip, ok := hostmatch.ParseIPHost(h); ok && Blocked(ip) != "" {
			t.Errorf("%q passed the URL check but %s is %s", host, ip, Blocked(ip))
		}
		if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && Blocked(ip) != "" {
			t.Errorf("%q passed the URL check but parses as %s", host, ip)
		}
	})
}
