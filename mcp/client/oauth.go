package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/toolbelt/toolbelt/config"
)

// SignInError is the error of a server that asks for a sign-in Toolbelt
// has not got (or for more scopes than it was granted): a person must run
// toolbelt mcp login.
type SignInError struct {
	Server string
	// Scopes are the scopes a 403 insufficient_scope asked for; empty for
	// a server that asks for a sign-in at all.
	Scopes []string
}

func (e *SignInError) Error() string {
	if len(e.Scopes) > 0 {
		return fmt.Sprintf("%s asks for more access (scopes %s): sign in again with toolbelt mcp login %s", e.Server, strings.Join(e.Scopes, " "), e.Server)
	}
	return fmt.Sprintf("not signed in to %s: run toolbelt mcp login %s", e.Server, e.Server)
}

// OAuthOptions configure the OAuth handler of a server (NewOAuth).
type OAuthOptions struct {
	// Resource is the server's URL: a kept grant made for another URL is
	// not sent (the server's url was changed: sign in again).
	Resource string
	// Tokens keeps the server's grant between runs; required for the
	// authorization_code grant.
	Tokens TokenStore
	// Fetch, when set, signs in when the server asks for it: it takes the
	// person (or a test's HTTP client) to the authorization server's URL and
	// returns what the redirect to RedirectURL brought back. Without it, a
	// server that asks for a sign-in fails with a *SignInError (Login sets
	// it; imports do not, as no person waits on them).
	Fetch auth.AuthorizationCodeFetcher
	// RedirectURL is where the authorization server redirects to; Fetch's
	// listener.
	RedirectURL string
	// HTTPClient reaches the authorization server (discovery, registration,
	// tokens); http.DefaultClient when nil.
	HTTPClient *http.Client
	// Logger hears of refreshed tokens that could not be kept (never the
	// tokens themselves); slog.Default() when nil.
	Logger *slog.Logger
}

// NewOAuth returns the OAuth handler of the imported server name, whose
// oauth entry is cfg, for an MCP streamable HTTP transport
// (mcp.StreamableClientTransport.OAuthHandler). It sends the grant kept in
// o.Tokens and refreshes it when it has expired or the server refuses it
// (once per refused request: the retry limit), keeping the rotated refresh
// token; with the client_credentials grant it gets tokens itself. The
// authorization server is found from the server's 401 (WWW-Authenticate,
// RFC 9728 protected-resource metadata, RFC 8414 or OpenID metadata, the
// 2025-03-26 defaults at the server's root), and every authorization and
// token request names the server as the resource (RFC 8707).
func NewOAuth(name string, cfg *config.MCPOAuth, o OAuthOptions) (auth.OAuthHandler, error) {
	return newOAuth(name, cfg, o)
}

func newOAuth(name string, cfg *config.MCPOAuth, o OAuthOptions) (*oauthHandler, error) {
	c := *cfg
	secret, err := expand("oauth.clientSecret", c.ClientSecret)
	if err != nil {
		return nil, err
	}
	c.ClientSecret = secret
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if c.Grant != config.GrantClientCredentials && o.Tokens == nil {
		return nil, fmt.Errorf("%s signs in with OAuth, but no token store is open to keep its tokens", name)
	}
	return &oauthHandler{name: name, cfg: c, o: o}, nil
}

// oauthHandler is an auth.OAuthHandler for one imported server.
type oauthHandler struct {
	name string
	cfg  config.MCPOAuth // its clientSecret expanded
	o    OAuthOptions

	mu       sync.Mutex
	fresh    bool              // a new sign-in (Login): what was kept is not used
	src      *grantSource      // the signed-in grant; nil before
	machine  auth.OAuthHandler // the client_credentials grant's, once it ran
	signedIn bool              // a sign-in ran through this handler
}

// TokenSource returns the source of the server's tokens: the client
// credentials', or the kept grant's (read again from the store while
// there is none, so a sign-in by another process is seen).
func (h *oauthHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.machine != nil {
		return h.machine.TokenSource(ctx)
	}
	if h.src == nil && !h.fresh && h.o.Tokens != nil {
		g, err := h.o.Tokens.Grant(ctx, h.name)
		if err != nil {
			return nil, err
		}
		switch {
		case g != nil && g.Resource != h.o.Resource:
			h.o.Logger.Warn("the kept OAuth sign-in was made for another URL and is not sent: run toolbelt mcp login", "server", h.name, "url", h.o.Resource)
		case g != nil:
			h.src = h.newSource(g)
		}
	}
	if h.src == nil {
		return nil, nil
	}
	return h.src, nil
}

// Authorize answers a 401 or 403: a refused token is refreshed (or
// replaced by the one another process kept meanwhile); otherwise the
// client credentials are exchanged, or the person signs in when Fetch is
// set, or the server is reported as needing a sign-in.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	stepUp := resp.StatusCode == http.StatusForbidden
	if stepUp && bearerParam(challenges, "error") != "insufficient_scope" {
		discard(resp)
		return nil // not about scopes: the retry shows the server's answer
	}
	if h.cfg.Grant == config.GrantClientCredentials {
		return h.clientCredentials(ctx, req, resp)
	}
	if !stepUp && h.renew(ctx, strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")) {
		discard(resp)
		return nil
	}
	if h.o.Fetch == nil {
		discard(resp)
		err := &SignInError{Server: h.name}
		if stepUp {
			err.Scopes = strings.Fields(bearerParam(challenges, "scope"))
			h.want(ctx, err.Scopes)
		}
		return err
	}
	return h.signIn(ctx, req, resp, stepUp)
}

// renew replaces the refused access token: by the grant kept in the store
// when another process refreshed it, by the one this source got meanwhile,
// else by refreshing it. It reports whether there is a new token to retry
// with.
func (h *oauthHandler) renew(ctx context.Context, refused string) bool {
	h.mu.Lock()
	src := h.src
	h.mu.Unlock()
	if src == nil {
		return false
	}
	held := src.accessToken()
	if g, err := h.o.Tokens.Grant(ctx, h.name); err == nil && g != nil && g.Token.AccessToken != held {
		h.mu.Lock()
		h.src = h.newSource(g)
		h.mu.Unlock()
		return true
	}
	if refused != "" && refused != held {
		return true
	}
	return src.refresh() == nil
}

// signIn runs the authorization code flow (the go-sdk's, with PKCE S256,
// the resource parameter, and client registration by client ID metadata
// document, the configured client, or dynamic registration, in that
// order) and keeps the grant it ends with.
func (h *oauthHandler) signIn(ctx context.Context, req *http.Request, resp *http.Response, stepUp bool) error {
	granted := h.previousScopes(ctx)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              h.o.RedirectURL,
		AuthorizationCodeFetcher: h.o.Fetch,
		Client:                   h.o.HTTPClient,
		RequestRefreshToken:      true,
		ScopeFilter: func(discovered []string) []string {
			switch { // keep what was granted or asked for before
			case stepUp:
				return union(granted, h.cfg.Scopes, discovered)
			case len(h.cfg.Scopes) > 0:
				return union(granted, h.cfg.Scopes)
			}
			return union(granted, discovered)
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			g := &Grant{Resource: h.o.Resource, Token: tok, ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle, Scopes: c.Scopes}
			if err := h.o.Tokens.SaveGrant(ctx, h.name, g); err != nil {
				return nil, err
			}
			src := h.newSource(g)
			h.mu.Lock()
			h.src, h.fresh, h.signedIn = src, false, true
			h.mu.Unlock()
			return src, nil
		},
	}
	if h.cfg.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if h.cfg.ClientID != "" {
		creds := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" && h.cfg.TokenEndpointAuth != "none" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
		cfg.PreregisteredClient = creds
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{h.o.RedirectURL},
			ClientName:              "Toolbelt",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: cmp.Or(h.cfg.TokenEndpointAuth, "none"),
		}}
	}
	flow, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		discard(resp)
		return err
	}
	return flow.Authorize(ctx, req, resp)
}

// previousScopes are the scopes of the grant held or kept, with those a
// server asked for since (want): a new sign-in asks for them all.
func (h *oauthHandler) previousScopes(ctx context.Context) []string {
	h.mu.Lock()
	src := h.src
	h.mu.Unlock()
	if src != nil {
		return src.scopes()
	}
	if g, err := h.o.Tokens.Grant(ctx, h.name); err == nil && g != nil {
		return g.Scopes
	}
	return nil
}

// want adds the scopes a server asked for (403 insufficient_scope) to the
// kept grant's, so the next sign-in (toolbelt mcp login, in another
// process) asks for them too.
func (h *oauthHandler) want(ctx context.Context, scopes []string) {
	g, err := h.o.Tokens.Grant(ctx, h.name)
	if err != nil || g == nil {
		return
	}
	g.Scopes = union(g.Scopes, scopes)
	if err := h.o.Tokens.SaveGrant(ctx, h.name, g); err != nil {
		h.o.Logger.Warn("keeping the scopes a server asked for failed", "server", h.name, "err", err)
	}
}

// clientCredentials exchanges the configured client's credentials for a
// token: its secret (the go-sdk's client credentials handler, which finds
// the token endpoint as a sign-in does) or a JWT its private key signs.
func (h *oauthHandler) clientCredentials(ctx context.Context, req *http.Request, resp *http.Response) error {
	var machine auth.OAuthHandler
	var err error
	if h.cfg.PrivateKeyFile != "" {
		machine, err = newJWTClient(h.cfg.ClientID, h.cfg.PrivateKeyFile, h.o.HTTPClient)
	} else {
		machine, err = extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: h.cfg.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}},
			HTTPClient:  h.o.HTTPClient,
		})
	}
	if err != nil {
		discard(resp)
		return err
	}
	if err := machine.Authorize(ctx, req, resp); err != nil {
		return err
	}
	h.mu.Lock()
	h.machine = machine
	h.mu.Unlock()
	return nil
}

// newSource returns the token source of g, which keeps each new token
// (refreshed, its refresh token rotated) in the store.
func (h *oauthHandler) newSource(g *Grant) *grantSource {
	kept := *g
	g = &kept
	switch h.cfg.TokenEndpointAuth {
	case "client_secret_basic":
		g.AuthStyle = oauth2.AuthStyleInHeader
	case "client_secret_post", "none":
		g.AuthStyle = oauth2.AuthStyleInParams
	}
	s := &grantSource{h: h, g: g}
	s.ts = g.config().TokenSource(h.refreshContext(), g.Token)
	return s
}

// refreshContext is the context refreshes run in: the source outlives
// the request that made it, so it carries only the HTTP client.
func (h *oauthHandler) refreshContext() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, h.o.HTTPClient)
}

// grantSource is the token source of a kept grant.
type grantSource struct {
	h  *oauthHandler
	mu sync.Mutex
	g  *Grant
	ts oauth2.TokenSource
}

// saveTimeout bounds keeping a refreshed grant.
const saveTimeout = 10 * time.Second

// Token returns the current token, refreshed when it has expired; a new
// token is kept.
func (s *grantSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.ts.Token()
	if err != nil {
		return nil, err
	}
	if t.AccessToken == s.g.Token.AccessToken {
		return t, nil
	}
	s.g.Token = t
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	if err := s.h.o.Tokens.SaveGrant(ctx, s.h.name, s.g); err != nil {
		s.h.o.Logger.Warn("keeping the refreshed OAuth token failed: the next run must sign in again", "server", s.h.name, "err", err)
	}
	return t, nil
}

// errNoRefresh is the error of refreshing a grant without a refresh token.
var errNoRefresh = errors.New("the grant has no refresh token")

// refresh gets a new token now, whatever the current one's expiry.
func (s *grantSource) refresh() error {
	s.mu.Lock()
	if s.g.Token.RefreshToken == "" {
		s.mu.Unlock()
		return errNoRefresh
	}
	stale := *s.g.Token
	stale.AccessToken = "" // not valid: the next Token refreshes
	s.ts = s.g.config().TokenSource(s.h.refreshContext(), &stale)
	s.mu.Unlock()
	_, err := s.Token()
	return err
}

// accessToken is the grant's current access token.
func (s *grantSource) accessToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g.Token.AccessToken
}

// scopes are the scopes the grant was asked with.
func (s *grantSource) scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g.Scopes
}

// bearerParam returns the parameter key of the Bearer challenge.
func bearerParam(cs []oauthex.Challenge, key string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[key] != "" {
			return c.Params[key]
		}
	}
	return ""
}

// union returns the scopes of lists, each once, in their first order.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// discard drains and closes an answer Authorize does not read.
func discard(resp *http.Response) {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// AuthState says, in a few words, how Toolbelt signs in to the server name
// configured by srv: "oauth: signed in, expires TIME" (with "(then
// refreshed)" when it has a refresh token; "oauth: signed in" for a token
// without an expiry), "oauth: not
// signed in — run toolbelt mcp login NAME", "oauth: client credentials",
// "headers" or "none". It never shows a token.
func AuthState(ctx context.Context, name string, srv config.MCPServer, tokens TokenStore) (string, error) {
	switch {
	case srv.OAuth != nil && srv.OAuth.Grant == config.GrantClientCredentials:
		return "oauth: client credentials", nil
	case srv.OAuth != nil:
		var g *Grant
		var err error
		if tokens != nil {
			g, err = tokens.Grant(ctx, name)
		}
		switch {
		case err != nil:
			return "", err
		case g == nil:
			return "oauth: not signed in — run toolbelt mcp login " + name, nil
		case g.Resource != srv.URL:
			return "oauth: not signed in (the kept sign-in is for another URL) — run toolbelt mcp login " + name, nil
		case g.Token.Expiry.IsZero():
			return "oauth: signed in", nil
		}
		state := "oauth: signed in, expires " + g.Token.Expiry.Local().Format(time.DateTime)
		if g.Token.RefreshToken != "" {
			state += " (then refreshed)"
		}
		return state, nil
	case len(srv.Headers) > 0:
		return "headers", nil
	}
	return "none", nil
}
