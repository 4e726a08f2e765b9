package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// OAuth makes the HTTP server an OAuth 2.1 resource server (the MCP
// authorization spec): it publishes its protected-resource metadata
// (RFC 9728) and accepts bearer JWTs an authorization server issued for it,
// beside the static tokens.
type OAuth struct {
	// Issuer is the authorization server's issuer URL; tokens must name it.
	Issuer string
	// JWKSURL is where its signing keys are (default: jwks_uri of the
	// issuer's metadata, RFC 8414 or OpenID discovery).
	JWKSURL string
	// Resource is this server's resource URL (its /mcp endpoint): tokens
	// must have it in their audience.
	Resource string
	// Scopes are the scopes the server advertises; a token with none of
	// them is refused with 403 insufficient_scope.
	Scopes []string
	// Principals maps a scope to the principal a token with it stands for
	// (the first of Scopes the token has that is mapped); a token with no
	// mapped scope stands for its PrincipalClaim (default "sub").
	Principals     map[string]string
	PrincipalClaim string
	// OwnerScope, when set, makes a token with that scope the owner.
	OwnerScope string
	// Client fetches the metadata and keys (default http.DefaultClient).
	Client *http.Client
}

// MetadataPath is where the protected-resource metadata is served: the
// well-known path with the resource's path after it (RFC 9728 §3.1).
func (o *OAuth) MetadataPath() string {
	u, err := url.Parse(o.Resource)
	if err != nil {
		return "/.well-known/oauth-protected-resource"
	}
	return "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
}

// metadataURL is the metadata's full URL, named in WWW-Authenticate.
func (o *OAuth) metadataURL() string {
	u, err := url.Parse(o.Resource)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: o.MetadataPath()}).String()
}

// MetadataHandler serves the protected-resource metadata.
func (o *OAuth) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               o.Resource,
		AuthorizationServers:   []string{o.Issuer},
		ScopesSupported:        o.Scopes,
		BearerMethodsSupported: []string{"header"},
	})
}

// errInsufficientScope is a valid token with none of the advertised scopes.
var errInsufficientScope = errors.New("insufficient_scope")

// jwtVerifier checks bearer JWTs against the issuer's keys, fetched once
// and again when a token names a key it does not know — at most once per
// refetchAfter, so tokens naming made-up keys cost the issuer one request
// per interval, not one each.
type jwtVerifier struct {
	o *OAuth

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet
	fetched time.Time // when the keys were last fetched (or tried)
}

// refetchAfter is how long after a fetch of the keys the next may be.
const refetchAfter = 30 * time.Second

// fetchTimeout bounds one fetch of the keys (metadata and key set).
const fetchTimeout = 10 * time.Second

// algorithms are the signature algorithms accepted (asymmetric only).
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// verify checks token and returns who it stands for.
func (v *jwtVerifier) verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil || len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: not a signed JWT", auth.ErrInvalidToken)
	}
	key, err := v.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	var extra map[string]any
	if err := tok.Claims(key, &std, &extra); err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	if std.Expiry == nil {
		return nil, fmt.Errorf("%w: no expiry", auth.ErrInvalidToken)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.o.Issuer, AnyAudience: jwt.Audience{v.o.Resource}, Time: time.Now()}, time.Minute); err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	scopes := tokenScopes(extra)
	if len(v.o.Scopes) > 0 && !slices.ContainsFunc(v.o.Scopes, func(s string) bool { return slices.Contains(scopes, s) }) {
		return nil, errInsufficientScope
	}
	principal := v.principal(scopes, extra)
	if principal == "" {
		return nil, fmt.Errorf("%w: no %s claim", auth.ErrInvalidToken, cmp.Or(v.o.PrincipalClaim, "sub"))
	}
	owner := v.o.OwnerScope != "" && slices.Contains(scopes, v.o.OwnerScope)
	return &auth.TokenInfo{UserID: principal, Scopes: scopes, Expiration: std.Expiry.Time(), Extra: map[string]any{ownerKey: owner}}, nil
}

// ClaimPrincipal prefixes a principal named by a token's claim, so that an
// issuer's user can never be a principal of mcp.tokens or of the scope map
// ("oauth:ada").
const ClaimPrincipal = "oauth:"

// principal is the principal of the first advertised scope the token has
// that is mapped, else the principal claim's value after ClaimPrincipal.
func (v *jwtVerifier) principal(scopes []string, claims map[string]any) string {
	for _, s := range v.o.Scopes {
		if p, ok := v.o.Principals[s]; ok && slices.Contains(scopes, s) {
			return p
		}
	}
	if p, _ := claims[cmp.Or(v.o.PrincipalClaim, "sub")].(string); p != "" {
		return ClaimPrincipal + p
	}
	return ""
}

// tokenScopes reads the scope claim (space-separated, RFC 9068) or scp (a
// list, as some issuers write it).
func tokenScopes(claims map[string]any) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	list, _ := claims["scp"].([]any)
	var scopes []string
	for _, s := range list {
		if s, ok := s.(string); ok {
			scopes = append(scopes, s)
		}
	}
	return scopes
}

// key returns the issuer's key of that id, fetching the keys when they are
// not known yet or do not have it.
func (v *jwtVerifier) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k := findKey(v.keys, kid); k != nil {
		return k, nil
	}
	if !v.fetched.IsZero() && time.Since(v.fetched) < refetchAfter {
		if v.keys == nil {
			return nil, fmt.Errorf("the issuer's keys could not be fetched; next try in %s", (refetchAfter - time.Since(v.fetched)).Round(time.Second))
		}
		return nil, fmt.Errorf("%w: signed with an unknown key", auth.ErrInvalidToken)
	}
	v.fetched = time.Now()
	// The fetch serves every request waiting on the lock, so one client
	// giving up does not cancel it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	keys, err := v.fetchKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys: %w", err)
	}
	v.keys = keys
	if k := findKey(keys, kid); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: signed with an unknown key", auth.ErrInvalidToken)
}

// findKey is the signing key of that id in keys (the only one when kid is
// empty and there is one).
func findKey(keys *jose.JSONWebKeySet, kid string) *jose.JSONWebKey {
	if keys == nil {
		return nil
	}
	if kid == "" && len(keys.Keys) == 1 {
		return &keys.Keys[0]
	}
	for _, k := range keys.Key(kid) {
		if k.Use == "" || k.Use == "sig" {
			return &k
		}
	}
	return nil
}

// fetchKeys reads the JWKS, from JWKSURL or the issuer's metadata.
func (v *jwtVerifier) fetchKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	where := v.o.JWKSURL
	if where == "" {
		meta, err := auth.GetAuthServerMetadata(ctx, v.o.Issuer, v.client())
		switch {
		case err != nil:
			return nil, err
		case meta == nil || meta.JWKSURI == "":
			return nil, fmt.Errorf("the issuer %s publishes no metadata with a jwks_uri (RFC 8414 or OpenID discovery): set mcp.oauth.jwksUrl", v.o.Issuer)
		}
		where = meta.JWKSURI
	}
	var keys jose.JSONWebKeySet
	if err := v.getJSON(ctx, where, &keys); err != nil {
		return nil, err
	}
	return &keys, nil
}

// client is the HTTP client that fetches the metadata and keys.
func (v *jwtVerifier) client() *http.Client {
	if v.o.Client == nil {
		return http.DefaultClient
	}
	return v.o.Client
}

// getJSON fetches where and decodes its JSON into v.
func (v *jwtVerifier) getJSON(ctx context.Context, where string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return err
	}
	resp, err := v.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", where, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(dst)
}
