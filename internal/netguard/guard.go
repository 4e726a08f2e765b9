// Package netguard decides which hosts a network tool may reach and
// connects only to addresses it checked: private, loopback, link-local and
// other special addresses are refused (after resolution, so DNS rebinding
// cannot get around it) unless the operator allowed the host. web_fetch and
// the sandbox's network proxy (internal/netproxy) both connect through it.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/internal/hostmatch"
)

// Refusal is a request the SSRF guard would not make; Reason says why, in
// words a model can act on.
type Refusal struct {
	URL    string
	Reason string
}

func (r *Refusal) Error() string {
	if r.URL == "" {
		return "refused: " + r.Reason
	}
	return fmt.Sprintf("refused to fetch %s: %s", r.URL, r.Reason)
}

// Refuse builds a Refusal of u (a redacted URL, or "") for the reason
// format and args say.
func Refuse(u string, format string, args ...any) *Refusal {
	return &Refusal{URL: u, Reason: fmt.Sprintf(format, args...)}
}

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DialFunc opens a connection to an address ("ip:port").
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ProxyFunc picks the proxy for a request's URL, or nil to connect directly.
type ProxyFunc func(*url.URL) (*url.URL, error)

// Options configure a Guard; the zero value refuses every special address
// and uses the system's resolver and dialer.
type Options struct {
	// AllowHosts are hosts ("host" or "host:port") reached even when they
	// are, or resolve to, private or special addresses.
	AllowHosts []string
	// Name is who connects, named in errors ("web_fetch").
	Name string
	// Setting is the configuration key of AllowHosts, named in refusals
	// so that a person knows where to allow a host (e.g.
	// "tools.web_fetch.allowHosts").
	Setting string
	// Resolver looks host names up (default net.DefaultResolver).
	Resolver Resolver
	// Dial connects to a checked address (default net.Dialer).
	Dial DialFunc
	// Proxy names an http:// proxy to tunnel through (nil: connect
	// directly); it is handed checked addresses, never names.
	Proxy ProxyFunc
}

// Guard decides which hosts may be reached and connects only to the
// addresses it checked.
type Guard struct {
	allow    map[string]bool // "host" and "host:port", canonical
	name     string
	setting  string
	resolver Resolver
	dial     DialFunc
	proxy    ProxyFunc // nil: always connect directly
}

// HostKey is a host in the form allowlists are matched against:
// lowercased, without a trailing dot, IP spellings canonical.
func HostKey(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, ok := hostmatch.ParseIPHost(host); ok {
		return ip.String()
	}
	return host
}

// New returns a Guard for o; an entry of o.AllowHosts that is not a host or
// host:port is an error naming o.Setting.
func New(o Options) (*Guard, error) {
	g := &Guard{allow: map[string]bool{}, name: o.Name, setting: o.Setting, resolver: o.Resolver, dial: o.Dial, proxy: o.Proxy}
	for _, h := range o.AllowHosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/@?# ") {
			return nil, fmt.Errorf("%s: %q is not a host or host:port (no scheme, path or credentials)", o.Setting, h)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil { // no port
			host, port = strings.Trim(h, "[]"), ""
		}
		if host == "" {
			return nil, fmt.Errorf("%s: %q is not a host or host:port", o.Setting, h)
		}
		if port != "" {
			if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
				return nil, fmt.Errorf("%s: %q has an invalid port", o.Setting, h)
			}
			g.allow[net.JoinHostPort(HostKey(host), port)] = true
		} else {
			g.allow[HostKey(host)] = true
		}
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		d := &net.Dialer{}
		g.dial = d.DialContext
	}
	return g, nil
}

// allowed reports whether the operator allowed host (canonical) on port.
func (g *Guard) allowed(host, port string) bool {
	return g.allow[host] || g.allow[net.JoinHostPort(host, port)]
}

// CheckURL refuses what can be told from the URL alone: its scheme,
// credentials, and a host that is, or is spelled as, a forbidden address.
func (g *Guard) CheckURL(u *url.URL) error {
	s := u.Redacted()
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return Refuse(s, "the URL has no scheme: use an absolute http:// or https:// URL")
	default:
		return Refuse(s, "the scheme %q is not allowed: only http and https URLs can be fetched", u.Scheme)
	}
	if u.User != nil {
		return Refuse(s, "the URL carries credentials (user:password@); they are not sent: remove them")
	}
	if u.Hostname() == "" {
		return Refuse(s, "the URL has no host")
	}
	if err := g.CheckHost(u.Hostname(), effectivePort(u)); err != nil {
		r := err.(*Refusal)
		r.URL = s
		return r
	}
	return nil
}

// CheckHost refuses what can be told from a host and port alone, before any
// lookup: a port out of range, and a host that is, or is spelled as, a
// forbidden address. The refusal it returns is a *Refusal with no URL.
func (g *Guard) CheckHost(host, port string) error {
	if strings.Contains(host, "%") {
		return Refuse("", "IPv6 zone identifiers (%%…) are not allowed")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Refuse("", "the port %s is not a TCP port a server can listen on (1–65535)", port)
	}
	key := HostKey(host)
	if g.allowed(key, port) {
		return nil
	}
	if isLocalhost(key) {
		return Refuse("", "%s names this machine (loopback); add it to %s to reach it", host, g.setting)
	}
	if ip, ok := hostmatch.ParseIPHost(strings.ToLower(host)); ok {
		if why := Blocked(ip); why != "" {
			return Refuse("", "%s is %s; private and special addresses are not reached (add the host to %s to allow it)", describeHost(host, ip), why, g.setting)
		}
	} else if hostmatch.Numeric(host) {
		return Refuse("", "the host %q looks like a numeric address but is not a valid one", host)
	}
	return nil
}

// isLocalhost reports whether a canonical host name is localhost or under
// it, names that resolve to this machine whatever DNS says (RFC 6761).
func isLocalhost(key string) bool {
	return key == "localhost" || strings.HasSuffix(key, ".localhost")
}

func describeHost(host string, ip netip.Addr) string {
	h := strings.Trim(host, "[]")
	if h == ip.String() {
		return h
	}
	return fmt.Sprintf("%s (= %s)", h, ip)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// Dialer returns the function that connects requests of one scheme
// ("http" or "https"): it resolves the host of addr once, checks every
// address it resolves to (unless the operator allowed the host), and
// connects to a checked address — directly, or through the proxy the
// environment names for the URL, asking it for a tunnel to that address.
// The name is never resolved again for this connection, by us or by a proxy.
func (g *Guard) Dialer(scheme, userAgent string) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var proxy *url.URL
		if g.proxy != nil {
			proxy, err = g.proxy(&url.URL{Scheme: scheme, Host: addr})
			if err != nil {
				return nil, fmt.Errorf("choosing a proxy for %s: %w", addr, err)
			}
		}
		ips, err := g.resolve(ctx, host, port, proxy)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, ip := range ips {
			target := net.JoinHostPort(ip.String(), port)
			var c net.Conn
			if proxy != nil {
				c, err = g.tunnel(ctx, network, proxy, target, userAgent)
			} else {
				c, err = g.dial(ctx, network, target)
			}
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		return nil, errors.Join(errs...)
	}
}

// resolve looks host up once and returns its addresses after checking each
// of them, unless the operator allowed host on port.
func (g *Guard) resolve(ctx context.Context, host, port string, proxy *url.URL) ([]netip.Addr, error) {
	key := HostKey(host)
	allowed := g.allowed(key, port)
	if !allowed && isLocalhost(key) {
		// A name that only becomes "localhost" after IDNA mapping
		// (ⓛⓞⓒⓐⓛⓗⓞⓢⓣ) gets here without the URL check seeing it.
		return nil, Refuse("", "%s names this machine (loopback); add it to %s to reach it", host, g.setting)
	}
	var ips []netip.Addr
	if ip, ok := hostmatch.ParseIPHost(strings.ToLower(host)); ok {
		if why := Blocked(ip); why != "" && !allowed {
			return nil, Refuse("", "the host %s is %s; private and special addresses are not reached (add the host to %s to allow it)", describeHost(host, ip), why, g.setting)
		}
		ips = []netip.Addr{ip}
	} else {
		addrs, err := g.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			if proxy != nil {
				// Where only the proxy can resolve names, say why we tried.
				return nil, fmt.Errorf("resolving %s failed (%v); %s resolves names itself, also when it uses the proxy %s, so that it can check the address it connects to", host, err, g.name, proxy.Redacted())
			}
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
		for _, a := range addrs {
			ip, ok := netip.AddrFromSlice(a.IP)
			if !ok {
				continue
			}
			// net.IP holds IPv4 in the IPv4-mapped form; judge and dial
			// it as the IPv4 address it is.
			ips = append(ips, ip.Unmap().WithZone(a.Zone))
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolving %s: no addresses", host)
		}
	}
	if !allowed {
		for _, ip := range ips {
			if ip.Zone() != "" {
				return nil, Refuse("", "%s resolves to %s, a zoned (link-local) address", host, ip)
			}
			if why := Blocked(ip); why != "" {
				return nil, Refuse("", "%s resolves to %s, which is %s; private and special addresses are not reached (add the host to %s to allow it)", host, ip, why, g.setting)
			}
		}
	}
	return ips, nil
}

var blockedV4 = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified (\"this network\") address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address (100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (cloud metadata services live here)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a reserved 6to4 relay address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address (192.168.0.0/16)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4, broadcast included)"},
}

var blockedV6 = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("::/128"), "the unspecified IPv6 address"},
	{netip.MustParsePrefix("::1/128"), "the IPv6 loopback address"},
	{netip.MustParsePrefix("100::/64"), "an IPv6 discard-only address"},
	{netip.MustParsePrefix("2001:db8::/32"), "an IPv6 documentation address"},
	{netip.MustParsePrefix("2001:10::/28"), "a reserved IPv6 address (ORCHID)"},
	{netip.MustParsePrefix("2001:20::/28"), "a reserved IPv6 address (ORCHIDv2)"},
	{netip.MustParsePrefix("2001:2::/48"), "an IPv6 benchmarking address (2001:2::/48)"},
	{netip.MustParsePrefix("3fff::/20"), "an IPv6 documentation address (3fff::/20)"},
	{netip.MustParsePrefix("5f00::/16"), "an IPv6 segment-routing (SRv6) address"},
	{netip.MustParsePrefix("fc00::/7"), "an IPv6 unique-local (private) address"},
	{netip.MustParsePrefix("fe80::/10"), "an IPv6 link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "an IPv6 site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "an IPv6 multicast address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
}

// IPv6 ranges that carry an IPv4 address, and where.
var (
	mapped     = netip.MustParsePrefix("::ffff:0:0/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	compatible = netip.MustParsePrefix("::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
)

// Blocked says why ip must not be fetched from, or "" when it may be.
// IPv6 forms that embed an IPv4 address are judged by that address too.
func Blocked(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is4() {
		for _, b := range blockedV4 {
			if b.p.Contains(ip) {
				return b.why
			}
		}
		return ""
	}
	for _, b := range blockedV6 {
		if b.p.Contains(ip) {
			return b.why
		}
	}
	a := ip.As16()
	embedded := func(kind string, v4 [4]byte) string {
		inner := netip.AddrFrom4(v4)
		if why := Blocked(inner); why != "" {
			return fmt.Sprintf("an %s form of %s, which is %s", kind, inner, why)
		}
		return ""
	}
	switch {
	case mapped.Contains(ip):
		return embedded("IPv4-mapped IPv6", [4]byte(a[12:16]))
	case translated.Contains(ip):
		return embedded("IPv4-translated IPv6", [4]byte(a[12:16]))
	case compatible.Contains(ip):
		return embedded("IPv4-compatible IPv6", [4]byte(a[12:16]))
	case nat64.Contains(ip):
		return embedded("NAT64 IPv6", [4]byte(a[12:16]))
	case sixToFour.Contains(ip):
		return embedded("6to4 IPv6", [4]byte(a[2:6]))
	case teredo.Contains(ip):
		if why := embedded("Teredo IPv6 (server)", [4]byte(a[4:8])); why != "" {
			return why
		}
		return embedded("Teredo IPv6 (client)", [4]byte{^a[12], ^a[13], ^a[14], ^a[15]})
	}
	return ""
}
