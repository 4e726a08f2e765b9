// Package hostmatch compares host names as the network rules name them:
// the domain: pattern of a policy rule or an allowlist (github.com,
// *.github.com), and IP addresses in every spelling a resolver accepts.
// It only parses text: the proxy (internal/netproxy), the web guard
// (internal/netguard) and policy share it without linking a network stack.
package hostmatch

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Match reports whether host is named by pattern: "github.com" names
// that host only, "*.github.com" its subdomains at any depth (not
// github.com itself). Both are compared in one spelling — lowercase, without
// a trailing dot, internationalized names in their ASCII (punycode) form —
// so "GitHub.COM.", "bücher.de" and "xn--bcher-kva.de" are each the same
// name as their other spellings. An IP address matches only a pattern that
// is the same address (in any spelling), never a name pattern. A pattern or
// host that is not a valid name matches nothing.
func Match(pattern, host string) bool {
	wild, name, ok := parsePattern(pattern)
	if !ok {
		return false
	}
	if ip, isIP := ParseIPHost(strings.ToLower(strings.TrimSpace(host))); isIP {
		pip, pIsIP := ParseIPHost(name)
		return !wild && pIsIP && pip == ip
	}
	if strings.Contains(host, ":") {
		return false // an IPv6 spelling that did not parse
	}
	h, ok := canonicalName(host)
	if !ok {
		return false
	}
	if wild {
		return strings.HasSuffix(h, "."+name)
	}
	return h == name
}

// CheckPattern says what is wrong with pattern as a domain pattern
// ("github.com", "*.github.com" or an IP address), or nil when it is one.
func CheckPattern(pattern string) error {
	if _, _, ok := parsePattern(pattern); !ok {
		return fmt.Errorf("%q is not a domain pattern: use a host name (github.com), *. and a host name for its subdomains (*.github.com), or an IP address", pattern)
	}
	return nil
}

// parsePattern splits pattern into its wildcard and its canonical name (or
// IP spelling, when it is an address).
func parsePattern(pattern string) (wild bool, name string, ok bool) {
	p := strings.ToLower(strings.TrimSpace(pattern))
	if rest, found := strings.CutPrefix(p, "*."); found {
		wild, p = true, rest
	}
	if _, isIP := ParseIPHost(p); isIP {
		return wild, p, !wild
	}
	name, ok = canonicalName(p)
	return wild, name, ok
}

// canonicalName is host in the one spelling names are compared in, and
// false when host is not a valid DNS name.
func canonicalName(host string) (string, bool) {
	h := strings.TrimSuffix(strings.TrimSpace(host), ".")
	if h == "" || strings.ContainsAny(h, "*/@:[] ") {
		return "", false
	}
	a, err := idna.Lookup.ToASCII(h)
	if err != nil || a == "" || strings.HasPrefix(a, ".") || strings.Contains(a, "..") {
		return "", false
	}
	return a, true
}

// ParseIPHost parses host as an IP address in any spelling a resolver or
// browser would accept: IPv6 in brackets or not, dotted IPv4, and the
// inet_aton forms — one to four parts, each decimal, octal (leading 0) or
// hex (0x), the last filling the remaining bytes ("2130706433",
// "0x7f.1", "0177.0.0.01").
func ParseIPHost(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(host, ".")
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.Contains(host, ":") {
		ip, err := netip.ParseAddr(host)
		return ip, err == nil
	}
	if !Numeric(host) {
		return netip.Addr{}, false
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := range last {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseAtonPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" is 0 to inet_aton
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

// Numeric reports whether host is made only of digits, dots and hex
// spellings, as inet_aton reads hosts; such a host is never looked up by name.
func Numeric(host string) bool {
	if host == "" {
		return false
	}
	for _, part := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if part == "" {
			return false
		}
		p := strings.ToLower(part)
		if strings.HasPrefix(p, "0x") {
			p = p[2:]
			for _, r := range p {
				if !strings.ContainsRune("0123456789abcdef", r) {
					return false
				}
			}
			continue
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return false
			}
		}
	}
	return true
}
