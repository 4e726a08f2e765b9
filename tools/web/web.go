// Package web holds the tools of the web section: web_fetch, which reads a
// URL safely (an SSRF guard checks every address it connects to, on every
// redirect) and returns its readable content, and web_search, which asks a
// configured search provider (Brave, Tavily, Exa, Perplexity, SearXNG).
// Everything both tools return is external, untrusted content: the pipeline
// wraps it as such.
package web

import (
	"crypto/x509"
	"os"

	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver = netguard.Resolver

// DialFunc opens a connection to an address ("ip:port").
type DialFunc = netguard.DialFunc

// Refusal is a request the SSRF guard would not make; Reason says why, in
// words a model can act on.
type Refusal = netguard.Refusal

// Options change how the web tools reach the network; the zero value uses
// the system's resolver and dialer and the process environment. Tests set
// them to point the tools at their own servers and resolvers.
type Options struct {
	// Resolver looks up host names for web_fetch (default net.DefaultResolver).
	Resolver Resolver
	// Dial connects web_fetch to a checked address (default net.Dialer).
	Dial DialFunc
	// RootCAs are the certificate authorities web_fetch trusts for https
	// (default: the system's), for embedders with an internal CA.
	RootCAs *x509.CertPool
	// Getenv reads API keys for web_search and the proxy variables
	// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) for web_fetch (default os.Getenv).
	Getenv func(string) string
}

func (o Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// Register adds web_fetch and web_search to reg. web_search is listed as
// unavailable, with the reason, when no search provider is configured.
func Register(reg *registry.Registry, opts Options) error {
	if err := reg.RegisterFactory(newFetchTool(opts), tool.Meta{
		ID: "web_fetch", Label: "Web Fetch", Description: fetchDescription,
		ReadOnly: true, OpenWorld: true, ExternalContent: true, Source: tool.SourceCore, Settings: &FetchConfig{},
	}); err != nil {
		return err
	}
	return reg.RegisterFactory(newSearchTool(opts), tool.Meta{
		ID: "web_search", Label: "Web Search", Description: searchDescription,
		ReadOnly: true, OpenWorld: true, ExternalContent: true, Source: tool.SourceCore, Settings: &SearchConfig{},
	})
}
