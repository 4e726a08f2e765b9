package web

import (
	"github.com/toolbelt/toolbelt/internal/netguard"
	"golang.org/x/net/http/httpproxy"
)

// proxyFromEnv reads the standard proxy variables (HTTP_PROXY, HTTPS_PROXY,
// NO_PROXY and their lowercase forms) through getenv. Loopback hosts and
// NO_PROXY matches connect directly, as net/http does.
func proxyFromEnv(getenv func(string) string) netguard.ProxyFunc {
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
