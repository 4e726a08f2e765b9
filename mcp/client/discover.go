package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is what discovery found of an imported server's
// authorization server.
type authServer struct {
	meta *oauthex.AuthServerMeta
	// resource is the resource to name in authorization and token requests
	// (RFC 8707): the protected-resource metadata's, else the server's URL.
	resource string
	// scopes are the scopes to ask for: the challenge's scope, else the
	// protected-resource metadata's scopes_supported.
	scopes []string
}

// discover finds the authorization server of the server at serverURL from
// its challenges: the protected-resource metadata the challenge names, or
// the well-known ones at the server's path and root (RFC 9728), and then
// the authorization server's metadata (RFC 8414 or OpenID discovery, its
// issuer checked as RFC 8414 section 3.3 requires), or the 2025-03-26
// defaults (/authorize, /token, /register) at the issuer. A server without
// protected-resource metadata is a 2025-03-26 one: its root is the
// authorization server, whose metadata at the root's well-known path is
// taken even when its issuer differs (as that revision allowed), or the
// defaults at the root.
func discover(ctx context.Context, challenges []oauthex.Challenge, serverURL string, hc *http.Client) (*authServer, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	root := u.Scheme + "://" + u.Host
	asked := strings.Fields(bearerParam(challenges, "scope"))
	candidates := [][2]string{} // metadata URL, its resource
	if m := bearerParam(challenges, "resource_metadata"); m != "" {
		candidates = append(candidates, [2]string{m, serverURL})
	}
	candidates = append(candidates, [2]string{root + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), serverURL},
		[2]string{root + "/.well-known/oauth-protected-resource", root})
	for _, c := range candidates {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c[0], c[1], hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the protected-resource metadata %s names no authorization server", c[0])
		}
		issuer := prm.AuthorizationServers[0]
		meta, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
		if err != nil {
			return nil, fmt.Errorf("the metadata of the authorization server %s: %w", issuer, err)
		}
		if meta == nil {
			meta = defaultEndpoints(issuer)
		}
		if len(asked) == 0 {
			asked = prm.ScopesSupported
		}
		return &authServer{meta: meta, resource: prm.Resource, scopes: asked}, nil
	}
	meta, err := legacyMetadata(ctx, root, hc)
	if err != nil {
		return nil, err
	}
	return &authServer{meta: meta, resource: serverURL, scopes: asked}, nil
}

// defaultEndpoints are the 2025-03-26 revision's endpoints of an
// authorization server without metadata.
func defaultEndpoints(issuer string) *oauthex.AuthServerMeta {
	issuer = strings.TrimSuffix(issuer, "/")
	return &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize",
		TokenEndpoint: issuer + "/token", RegistrationEndpoint: issuer + "/register"}
}

// legacyMetadata reads the metadata at root's
// /.well-known/oauth-authorization-server the 2025-03-26 way: the server's
// root is its authorization server, and the metadata found there is taken
// whatever issuer it names (oauthex refuses it: RFC 8414's check, which the
// current revision requires, was not that revision's). Its endpoints must
// be https (or http on a loopback address). Without metadata (a 4xx), the
// defaults at root.
func legacyMetadata(ctx context.Context, root string, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	where := root + "/.well-known/oauth-authorization-server"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the authorization server's metadata: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return defaultEndpoints(root), nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", where, resp.Status)
	}
	var meta oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	for name, e := range map[string]string{"authorization_endpoint": meta.AuthorizationEndpoint, "token_endpoint": meta.TokenEndpoint, "registration_endpoint": meta.RegistrationEndpoint} {
		if err := checkEndpoint(e); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, name, err)
		}
	}
	if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return nil, fmt.Errorf("%s names no authorization_endpoint or token_endpoint", where)
	}
	return &meta, nil
}

// checkEndpoint refuses an endpoint URL that is not https, or http on a
// loopback address; an empty one is fine.
func checkEndpoint(e string) error {
	if e == "" {
		return nil
	}
	u, err := url.Parse(e)
	switch {
	case err != nil:
		return err
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && (u.Hostname() == "localhost" || net.ParseIP(u.Hostname()).IsLoopback()):
		return nil
	}
	return fmt.Errorf("%q is not an https URL", e)
}
