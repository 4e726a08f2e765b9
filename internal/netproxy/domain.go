package netproxy

import (
	"fmt"
	"strings"

	"golang.org/x/net/idna"

	"github.com/toolbelt/toolbelt/internal/netguard"
)

// MatchDomain reports whether host is named by pattern: "github.com" names
// that host only, "*.github.com" its subdomains at any depth (not
// github.com itself). Both are compared in one spelling — lowercase, without
// a trailing dot, internationalized names in their ASCII (punycode) form —
// so "GitHub.COM.", "bücher.de" and "xn--bcher-kva.de" are each the same
// name as their other spellings. An IP address matches only a pattern that
// is the same address (in any spelling), never a name pattern. A pattern or
// host that is not a valid name matches nothing.
func MatchDomain(pattern, host string) bool {
	wild, name, ok := parsePattern(pattern)
	if !ok {
		return false
	}
	if ip, isIP := netguard.ParseIPHost(strings.ToLower(strings.TrimSpace(host))); isIP {
		pip, pIsIP := netguard.ParseIPHost(name)
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

// CheckDomainPattern says what is wrong with pattern as a domain pattern
// ("github.com", "*.github.com" or an IP address), or nil when it is one.
func CheckDomainPattern(pattern string) error {
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
	if _, isIP := netguard.ParseIPHost(p); isIP {
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
