package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
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
	// Show, when set, signs in when the server asks for it (or for more
	// scopes): it takes the person (or a test's HTTP client) to the
	// authorization server's sign-in page at url, which redirects back to a
	// listener on the loopback address (http://127.0.0.1:PORT/callback, PORT
	// the oauth entry's redirectPort or any free one). Without it, a server
	// that asks for a sign-in fails with a *SignInError (Login sets it, and
	// Options.SignIn; imports do not, as no person waits on them).
	Show func(url string) error
	// Device, when set, signs in with the device authorization grant (RFC
	// 8628) where the authorization server offers it, instead of Show's
	// redirect: it shows the person the page to open on any device and the
	// code to enter there.
	Device func(DeviceCode) error
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
// token; with the client_credentials and enterprise grants it gets tokens
// itself. The authorization server is found from the server's 401
// (WWW-Authenticate, RFC 9728 protected-resource metadata, RFC 8414 or
// OpenID metadata, the 2025-03-26 metadata or defaults at the server's
// root), and every authorization and token request names the server as
// the resource (RFC 8707).
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
	if c.Grant == config.GrantAuthorizationCode && o.Tokens == nil {
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
	stepUps  int               // sign-ins for more scopes
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
// client credentials or the enterprise grant are exchanged, or the person
// signs in when Show is set (for more scopes too: a step-up), or the server
// is reported as needing a sign-in.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	stepUp := resp.StatusCode == http.StatusForbidden
	if stepUp && bearerParam(challenges, "error") != "insufficient_scope" {
		discard(resp)
		return nil // not about scopes: the retry shows the server's answer
	}
	if h.cfg.Grant == config.GrantClientCredentials || h.cfg.Grant == config.GrantEnterprise {
		return h.machineGrant(ctx, req, resp)
	}
	if !stepUp && h.renew(ctx, strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")) {
		discard(resp)
		return nil
	}
	if h.o.Show == nil {
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

// maxStepUps bounds the sign-ins one handler runs for more scopes (403
// insufficient_scope): a server that keeps asking is not followed forever.
const maxStepUps = 3

// signIn runs the authorization code flow: discovery from the server's
// challenge, the client registered by client ID metadata document, the
// configured client or dynamic registration (in that order), the
// person's sign-in on the page Show is given (PKCE S256, the resource
// named, the redirect back to a loopback listener), the code exchanged
// with the client authenticated as tokenEndpointAuth says; it keeps the
// grant it ends with. A step-up asks for the scopes granted before and
// those the server asked for; one asking only for scopes already granted
// is refused rather than signed in again (the retry limit).
func (h *oauthHandler) signIn(ctx context.Context, req *http.Request, resp *http.Response, stepUp bool) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	discard(resp)
	granted := h.previousScopes(ctx)
	if stepUp {
		asked := strings.Fields(bearerParam(challenges, "scope"))
		h.mu.Lock()
		h.stepUps++
		n := h.stepUps
		h.mu.Unlock()
		if n > maxStepUps || (h.signedIn && len(granted) > 0 && !slices.ContainsFunc(asked, func(s string) bool { return !slices.Contains(granted, s) })) {
			return fmt.Errorf("%s refuses the token (insufficient_scope, scopes %s) though it was granted them: not signing in again", h.name, strings.Join(asked, " "))
		}
	}
	as, err := discover(ctx, challenges, req.URL.String(), h.o.HTTPClient)
	if err != nil {
		return err
	}
	meta := as.meta
	if len(meta.CodeChallengeMethodsSupported) > 0 && !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("the authorization server %s does not support PKCE with S256", meta.Issuer)
	}
	var scopes []string
	switch { // keep what was granted or asked for before
	case stepUp:
		scopes = union(granted, h.cfg.Scopes, as.scopes)
	case len(h.cfg.Scopes) > 0:
		scopes = union(granted, h.cfg.Scopes)
	default:
		scopes = union(granted, as.scopes)
	}
	if slices.Contains(meta.ScopesSupported, "offline_access") { // SEP-2207: a refresh token is wanted
		scopes = union(scopes, []string{"offline_access"})
	}
	if h.o.Device != nil {
		if endpoint := deviceEndpoint(ctx, meta, h.o.HTTPClient); endpoint != "" {
			return h.deviceSignIn(ctx, as, endpoint, scopes)
		}
	}
	lb, err := listenLoopback(h.name, h.cfg.RedirectPort, h.o.Logger)
	if err != nil {
		return err
	}
	defer lb.close()
	c, err := h.register(ctx, meta, lb.redirect)
	if err != nil {
		return err
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	lb.expect(state)
	authURL := (&oauth2.Config{ClientID: c.id, Endpoint: oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint}, RedirectURL: lb.redirect, Scopes: scopes}).
		AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", as.resource))
	if err := h.o.Show(authURL); err != nil {
		return err
	}
	code, iss, err := lb.wait(ctx)
	if err != nil {
		return err
	}
	if (iss != "" || meta.AuthorizationResponseIssParameterSupported) && iss != meta.Issuer { // RFC 9207
		return fmt.Errorf("the sign-in's redirect names the issuer %q, not %q", iss, meta.Issuer)
	}
	tok, _, err := requestToken(ctx, h.o.HTTPClient, meta.TokenEndpoint, c, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {lb.redirect}, "code_verifier": {verifier}, "resource": {as.resource}})
	if err != nil {
		return fmt.Errorf("exchanging the sign-in's code: %w", err)
	}
	return h.keep(ctx, as, c, tok, scopes)
}

// keep keeps the grant a sign-in ended with: tok, issued to c by as for
// scopes.
func (h *oauthHandler) keep(ctx context.Context, as *authServer, c oauthClient, tok *oauth2.Token, scopes []string) error {
	g := &Grant{Resource: h.o.Resource, ResourceIndicator: as.resource, Token: tok, ClientID: c.id, ClientSecret: c.secret,
		TokenURL: as.meta.TokenEndpoint, AuthStyle: c.style, Scopes: scopes}
	if err := h.o.Tokens.SaveGrant(ctx, h.name, g); err != nil {
		return err
	}
	src := h.newSource(g)
	h.mu.Lock()
	h.src, h.fresh, h.signedIn = src, false, true
	h.mu.Unlock()
	return nil
}

// register returns the client to sign in as at the authorization server
// meta describes: the client ID metadata document's URL where the server
// takes such documents, else the configured client, else one registered
// now (RFC 7591) with redirect as its redirect URI — or, without one, for
// the device authorization grant.
func (h *oauthHandler) register(ctx context.Context, meta *oauthex.AuthServerMeta, redirect string) (oauthClient, error) {
	supported := meta.TokenEndpointAuthMethodsSupported
	switch {
	case h.cfg.ClientMetadataURL != "" && meta.ClientIDMetadataDocumentSupported:
		return oauthClient{id: h.cfg.ClientMetadataURL, style: oauth2.AuthStyleInParams}, nil
	case h.cfg.ClientID != "":
		c := oauthClient{id: h.cfg.ClientID, style: authStyle(h.cfg.TokenEndpointAuth, "", supported)}
		if h.cfg.TokenEndpointAuth != "none" {
			c.secret = h.cfg.ClientSecret
		}
		return c, nil
	case meta.RegistrationEndpoint != "":
		md := &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "Toolbelt",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: cmp.Or(h.cfg.TokenEndpointAuth, "none"),
		}
		if redirect == "" {
			md.RedirectURIs, md.GrantTypes, md.ResponseTypes = nil, []string{grantDeviceCode, "refresh_token"}, nil
		}
		r, err := oauthex.RegisterClient(ctx, meta.RegistrationEndpoint, md, h.o.HTTPClient)
		if err != nil {
			return oauthClient{}, fmt.Errorf("registering Toolbelt with the authorization server: %w", err)
		}
		return oauthClient{id: r.ClientID, secret: r.ClientSecret, style: authStyle(h.cfg.TokenEndpointAuth, r.TokenEndpointAuthMethod, supported)}, nil
	}
	return oauthClient{}, fmt.Errorf("the authorization server %s takes no dynamic registration: set oauth.clientId (a client registered there) for %s", meta.Issuer, h.name)
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

// machineGrant gets a token without a sign-in: the enterprise grant's
// exchanges, or the configured client's credentials — its secret (the
// go-sdk's client credentials handler, which finds the token endpoint as a
// sign-in does) or a JWT its private key signs.
func (h *oauthHandler) machineGrant(ctx context.Context, req *http.Request, resp *http.Response) error {
	var machine auth.OAuthHandler
	var err error
	switch {
	case h.cfg.Grant == config.GrantEnterprise:
		machine, err = newEnterpriseClient(h.cfg, h.o.HTTPClient)
	case h.cfg.PrivateKeyFile != "":
		machine, err = newJWTClient(h.cfg.ClientID, h.cfg.PrivateKeyFile, h.o.HTTPClient)
	default:
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
	return &grantSource{h: h, g: g}
}

// grantSource is the token source of a kept grant.
type grantSource struct {
	h     *oauthHandler
	mu    sync.Mutex
	g     *Grant
	stale bool // the server refused the access token: refresh it
}

// refreshTimeout bounds refreshing a token and keeping the new one.
const refreshTimeout = 30 * time.Second

// Token returns the current token, refreshed when it has expired (or was
// refused); a new token is kept.
func (s *grantSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.g.Token.Valid() && !s.stale {
		return s.g.Token, nil
	}
	if s.g.Token.RefreshToken == "" {
		return nil, fmt.Errorf("the OAuth token of %s expired: %w", s.h.name, errNoRefresh)
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	t, err := s.g.refresh(ctx, s.h.o.HTTPClient)
	if err != nil {
		return nil, err
	}
	s.g.Token, s.stale = t, false
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
	s.stale = true
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
// "oauth: enterprise, through ISSUER" (the identity provider's), "headers"
// or "none". It never shows a token.
func AuthState(ctx context.Context, name string, srv config.MCPServer, tokens TokenStore) (string, error) {
	switch {
	case srv.OAuth != nil && srv.OAuth.Grant == config.GrantClientCredentials:
		return "oauth: client credentials", nil
	case srv.OAuth != nil && srv.OAuth.Grant == config.GrantEnterprise && srv.OAuth.IDP != nil:
		return "oauth: enterprise, through " + srv.OAuth.IDP.Issuer, nil
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
