package netproxy

import (
	"net"
	"strings"

	"github.com/toolbelt/toolbelt/internal/hostmatch"
)

// MatchDomain reports whether host is named by the domain pattern (see
// [hostmatch.Match]), for the proxy's allow functions.
func MatchDomain(pattern, host string) bool { return hostmatch.Match(pattern, host) }

// CheckDomainPattern says what is wrong with a domain pattern (see
// [hostmatch.CheckPattern]).
func CheckDomainPattern(pattern string) error { return hostmatch.CheckPattern(pattern) }

// HostOf is the host of "host", "host:port" or "[v6]:port".
func HostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
