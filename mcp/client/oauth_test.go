package client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/oauthtest"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/mcp/client"
)

// memRows are sealed rows in memory.
type memRows struct {
	mu   sync.Mutex
	rows map[string][]byte
}

func (m *memRows) Get(_ context.Context, server string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rows[server], nil
}

func (m *memRows) Put(_ context.Context, server string, sealed []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[server] = sealed
	return nil
}

func (m *memRows) Delete(_ context.Context, server string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.rows[server]
	delete(m.rows, server)
	return ok, nil
}

func newVault(t *testing.T, rows *memRows, key string) *client.Vault {
	t.Helper()
	v, err := client.NewVault(rows, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVault: a grant comes back as it was saved, its row holds no token
// in the clear, and it does not open with another key or under another
// server's name; a short key is refused.
func TestVault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := &memRows{rows: map[string][]byte{}}
	v := newVault(t, rows, "a key of more than sixteen bytes")
	g := &client.Grant{ClientID: "c", TokenURL: "http://as/token"}
	g.Token = oauthToken("the-access-token", "the-refresh-token")
	if err := v.SaveGrant(ctx, "srv", g); err != nil {
		t.Fatal(err)
	}
	back, err := v.Grant(ctx, "srv")
	if err != nil || back.Token.AccessToken != "the-access-token" || back.Token.RefreshToken != "the-refresh-token" || back.ClientID != "c" {
		t.Fatalf("grant: %+v %v", back, err)
	}
	if bytes.Contains(rows.rows["srv"], []byte("the-access-token")) || bytes.Contains(rows.rows["srv"], []byte("the-refresh-token")) {
		t.Error("the row holds a token in the clear")
	}
	if _, err := newVault(t, rows, "another key of sixteen bytes").Grant(ctx, "srv"); !errors.Is(err, client.ErrTokenKey) {
		t.Errorf("another key: %v", err)
	}
	rows.rows["other"] = rows.rows["srv"]
	if _, err := v.Grant(ctx, "other"); !errors.Is(err, client.ErrTokenKey) {
		t.Errorf("a row moved to another server: %v", err)
	}
	if g, err := v.Grant(ctx, "none"); g != nil || err != nil {
		t.Errorf("no grant: %v %v", g, err)
	}
	if _, err := client.NewVault(rows, []byte("short")); err == nil {
		t.Error("a short key was taken")
	}
}

// browse plays the person's browser: it follows the sign-in URL's
// redirects, back to Login's listener.
func browse(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// connect imports nothing: it connects to srv with its OAuth handler and
// lists the tools, as an import's first steps do.
func connect(t *testing.T, srv config.MCPServer, tokens client.TokenStore) error {
	t.Helper()
	h, err := client.NewOAuth("remote", srv.OAuth, client.OAuthOptions{Resource: srv.URL, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, DisableStandaloneSSE: true}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err == nil && res.Content[0].(*mcp.TextContent).Text != "echo: hi" {
		t.Errorf("echo: %+v", res.Content)
	}
	return err
}

// TestOAuthStepUp: a server that asks for a scope the grant lacks (403
// insufficient_scope) is reported as needing a new sign-in naming the
// scopes; the next sign-in asks for the scopes granted before and the new
// one, and its grant is taken.
func TestOAuthStepUp(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
	srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{}}
	if err := connect(t, srv, tokens); !errors.As(err, new(*client.SignInError)) {
		t.Fatalf("before a sign-in: %v", err)
	}
	ctx := context.Background()
	login := func() {
		t.Helper()
		if err := client.Login(ctx, "remote", srv, client.LoginOptions{Tokens: tokens, Show: browse}); err != nil {
			t.Fatal(err)
		}
	}
	login()
	if err := connect(t, srv, tokens); err != nil {
		t.Fatal(err)
	}
	as.Require("admin")
	err := connect(t, srv, tokens)
	var signIn *client.SignInError
	if !errors.As(err, &signIn) || !slices.Equal(signIn.Scopes, []string{"admin"}) {
		t.Fatalf("after the server asked for more: %v", err)
	}
	login() // the step-up: one sign-in asks for what was granted and what the server asked for
	if asked := as.Asked(); !slices.Contains(asked, "admin") || !slices.Contains(asked, "tools") || as.Granted("authorization_code") != 2 {
		t.Errorf("the step-up's authorization request asked for %v (%d sign-ins)", asked, as.Granted("authorization_code"))
	}
	if err := connect(t, srv, tokens); err != nil {
		t.Errorf("after the step-up: %v", err)
	}
}

// TestOAuthGrantStaysWithItsURL: a grant is sent only to the URL it was
// made for: once the server's url names another address, it is not sent
// (even to the same server), and mcp servers says to sign in again.
func TestOAuthGrantStaysWithItsURL(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
	srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{}}
	ctx := context.Background()
	if err := client.Login(ctx, "remote", srv, client.LoginOptions{Tokens: tokens, Show: browse}); err != nil {
		t.Fatal(err)
	}
	if err := connect(t, srv, tokens); err != nil {
		t.Fatal(err)
	}
	moved := srv
	moved.URL = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if err := connect(t, moved, tokens); !errors.As(err, new(*client.SignInError)) {
		t.Errorf("the grant was sent to %s: %v", moved.URL, err)
	}
	if state, err := client.AuthState(ctx, "remote", moved, tokens); err != nil || !strings.Contains(state, "not signed in (the kept sign-in is for another URL)") {
		t.Errorf("auth state %q (%v)", state, err)
	}
}

// TestOAuthClientCredentials: a machine client gets its token from the
// client credentials grant with its secret (the token endpoint found by
// discovery), without a sign-in or a store; a wrong secret is refused.
func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	for _, tc := range []struct {
		secret, auth string
		ok           bool
	}{
		{oauthtest.MachineSecret, "", true},
		{oauthtest.MachineSecret, "client_secret_basic", true},
		{"wrong", "", false},
	} {
		srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantClientCredentials,
			ClientID: oauthtest.MachineID, ClientSecret: tc.secret, TokenEndpointAuth: tc.auth}}
		if err := connect(t, srv, nil); (err == nil) != tc.ok {
			t.Errorf("secret %s, %s: %v", tc.secret, tc.auth, err)
		}
	}
}

// TestOAuthClientCredentialsJWT: a machine client authenticates with a
// JWT its private key signs (private_key_jwt) with the algorithm of the
// key's curve (ES256, ES384, ES512), which the authorization server
// verifies with the public key; another key is refused.
func TestOAuthClientCredentialsJWT(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := func(name string, curve elliptic.Curve) (string, *ecdsa.PrivateKey) {
		key, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path, key
	}
	for _, curve := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		as := oauthtest.New()
		defer as.Close()
		name := curve.Params().Name
		trusted, key := keyFile(name+"-trusted.pem", curve)
		other, _ := keyFile(name+"-other.pem", curve)
		as.TrustKey(&key.PublicKey)
		for path, ok := range map[string]bool{trusted: true, other: false} {
			srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantClientCredentials,
				ClientID: oauthtest.MachineID, PrivateKeyFile: path}}
			if err := connect(t, srv, nil); (err == nil) != ok {
				t.Errorf("%s: %v", filepath.Base(path), err)
			}
		}
	}
}

func oauthToken(access, refresh string) *oauth2.Token {
	return &oauth2.Token{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer"}
}

// TestOAuthClientMetadataDocument: where the authorization server takes
// client ID metadata documents, the configured document's URL is the
// client id: no registration happens.
func TestOAuthClientMetadataDocument(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	const document = "https://client.example/toolbelt.json"
	as.AcceptDocument(document)
	tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
	srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{ClientMetadataURL: document}}
	if err := client.Login(context.Background(), "remote", srv, client.LoginOptions{Tokens: tokens, Show: browse}); err != nil {
		t.Fatal(err)
	}
	g, err := tokens.Grant(context.Background(), "remote")
	if err != nil || g == nil || g.ClientID != document || as.Registered() != 0 {
		t.Errorf("grant %+v, %v; %d registrations", g, err, as.Registered())
	}
	if err := connect(t, srv, tokens); err != nil {
		t.Error(err)
	}
}

// connectWith connects to srv with an OAuth handler of options o and
// calls its echo tool.
func connectWith(t *testing.T, srv config.MCPServer, o client.OAuthOptions) error {
	t.Helper()
	h, err := client.NewOAuth("remote", srv.OAuth, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, DisableStandaloneSSE: true}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	_, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	return err
}

// TestOAuthInteractiveStepUp: a handler that can sign in (Show: the
// adapter's, or an import given Options.SignIn) answers a mid-run 403
// insufficient_scope with a second sign-in asking for the scopes granted
// and the new one, and the call goes through; a server that keeps asking
// for a scope it never grants gets one more sign-in, not a loop, and the
// call fails with an error saying so.
func TestOAuthInteractiveStepUp(t *testing.T) {
	t.Parallel()
	for _, withheld := range []bool{false, true} {
		as := oauthtest.New()
		defer as.Close()
		tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
		srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{}}
		o := client.OAuthOptions{Resource: srv.URL, Tokens: tokens, Show: browse}
		if err := connectWith(t, srv, o); err != nil {
			t.Fatal(err)
		}
		as.Require("admin")
		if withheld {
			as.Withhold("admin")
		}
		err := connectWith(t, srv, o)
		switch {
		case !withheld && err != nil:
			t.Errorf("after the step-up: %v", err)
		case withheld && (err == nil || !strings.Contains(err.Error(), "though it was granted them")):
			t.Errorf("a scope never granted: %v", err)
		}
		if asked := as.Asked(); !slices.Contains(asked, "admin") || !slices.Contains(asked, "tools") || as.Granted("authorization_code") != 2 {
			t.Errorf("withheld %v: the step-up asked for %v (%d sign-ins, want 2: the first sign-in, one step-up)", withheld, asked, as.Granted("authorization_code"))
		}
	}
}

// TestOAuthLegacyMetadata: a 2025-03-26 server (no protected-resource
// metadata; the authorization server's metadata at its root names another
// issuer) is signed in to with that metadata's endpoints.
func TestOAuthLegacyMetadata(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	as.Legacy(as.URL + "/oauth")
	tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
	srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{}}
	if err := client.Login(context.Background(), "remote", srv, client.LoginOptions{Tokens: tokens, Show: browse}); err != nil {
		t.Fatal(err)
	}
	if err := connect(t, srv, tokens); err != nil || as.Granted("authorization_code") != 1 {
		t.Errorf("%v (%d sign-ins)", err, as.Granted("authorization_code"))
	}
}

// TestOAuthTokenEndpointAuth: a pre-registered client authenticates as
// tokenEndpointAuth says at the code exchange and at the refresh alike,
// and the refresh names the resource (the server refuses one without).
func TestOAuthTokenEndpointAuth(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		as := oauthtest.New()
		defer as.Close()
		tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
		srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{ClientID: oauthtest.WebID, ClientSecret: oauthtest.WebSecret, TokenEndpointAuth: method}}
		if err := client.Login(context.Background(), "remote", srv, client.LoginOptions{Tokens: tokens, Show: browse}); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		as.Expire()
		if err := connect(t, srv, tokens); err != nil || as.Granted("refresh_token") != 1 {
			t.Errorf("%s: after expiry: %v (%d refreshes)", method, err, as.Granted("refresh_token"))
		}
		if got := as.ClientAuth(); !slices.Equal(got, []string{method, method}) {
			t.Errorf("%s: the token requests authenticated with %v", method, got)
		}
	}
}

// TestOAuthLoginIgnoresWrongState: a redirect to the sign-in's listener
// naming another state (a stale tab, another page) is answered 400 and
// ignored; the sign-in goes on and ends with the real redirect.
func TestOAuthLoginIgnoresWrongState(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	tokens := newVault(t, &memRows{rows: map[string][]byte{}}, "a key of more than sixteen bytes")
	srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{}}
	var forged int
	show := func(signIn string) error {
		u, err := url.Parse(signIn)
		if err != nil {
			return err
		}
		for _, q := range []string{"state=forged&code=evil", "state=forged&error=access_denied"} {
			resp, err := http.Get(u.Query().Get("redirect_uri") + "?" + q)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusBadRequest {
				forged++
			}
		}
		return browse(signIn)
	}
	var logs bytes.Buffer
	o := client.LoginOptions{Tokens: tokens, Show: show, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := client.Login(context.Background(), "remote", srv, o); err != nil {
		t.Fatal(err)
	}
	if forged != 2 || !strings.Contains(logs.String(), "ignored") {
		t.Errorf("%d forged redirects refused; log %q", forged, logs.String())
	}
}

// TestOAuthEnterprise: the enterprise grant exchanges the configured ID
// token at the identity provider for an identity assertion grant, which
// the authorization server exchanges for the server's token (the client
// authenticated with its secret); a wrong ID token gets no token.
func TestOAuthEnterprise(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	as.IdentityProvider("the-id-token")
	for token, ok := range map[string]bool{"the-id-token": true, "another": false} {
		srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantEnterprise, ClientID: oauthtest.WebID, ClientSecret: oauthtest.WebSecret,
			IDP: &config.MCPOAuthIDP{Issuer: as.URL, ClientID: "toolbelt", IDToken: token}}}
		if err := connect(t, srv, nil); (err == nil) != ok {
			t.Errorf("ID token %s: %v", token, err)
		}
	}
	if state, err := client.AuthState(context.Background(), "remote", config.MCPServer{OAuth: &config.MCPOAuth{Grant: config.GrantEnterprise, IDP: &config.MCPOAuthIDP{Issuer: "https://idp.example"}}}, nil); err != nil || state != "oauth: enterprise, through https://idp.example" {
		t.Errorf("auth state %q %v", state, err)
	}
}

// TestOAuthEnterpriseIDTokenFresh: the enterprise grant's ID token comes
// from oauth.idp.idTokenCommand, its output each time an exchange needs
// one: a token the identity provider renewed is taken once the server
// refuses the old grant. A command that fails says why without the
// token, and no token reaches the logs.
func TestOAuthEnterpriseIDTokenFresh(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	as.IdentityProvider("id-token-1")
	file := filepath.Join(t.TempDir(), "id-token")
	if err := os.WriteFile(file, []byte("id-token-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	enterprise := func(idp config.MCPOAuthIDP) config.MCPServer {
		idp.Issuer, idp.ClientID = as.URL, "toolbelt"
		return config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantEnterprise, ClientID: oauthtest.WebID, ClientSecret: oauthtest.WebSecret, IDP: &idp}}
	}
	var logs syncbuf.Buffer
	srv := enterprise(config.MCPOAuthIDP{IDTokenCommand: []string{"cat", file}})
	h, err := client.NewOAuth("remote", srv.OAuth, client.OAuthOptions{Resource: srv.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, DisableStandaloneSSE: true}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	echo := func() error {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		return err
	}
	if err := echo(); err != nil {
		t.Fatal(err)
	}
	// The identity provider renews the person's ID token and takes only
	// the new one; the server refuses the grant it issued before.
	as.IdentityProvider("id-token-2")
	if err := os.WriteFile(file, []byte("id-token-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	as.Expire()
	if err := echo(); err != nil {
		t.Fatalf("after the ID token was renewed: %v", err)
	}
	if strings.Contains(logs.String(), "id-token-") {
		t.Errorf("an ID token was logged: %s", logs.String())
	}

	for _, tc := range []struct {
		idp  config.MCPOAuthIDP
		want string
	}{
		{config.MCPOAuthIDP{IDTokenCommand: []string{"sh", "-c", "echo id-token-2; echo no SSO session >&2; exit 3"}}, "oauth.idp.idTokenCommand sh failed (exit status 3: no SSO session)"},
		{config.MCPOAuthIDP{IDTokenCommand: []string{"true"}}, "oauth.idp.idTokenCommand true printed nothing"},
		{config.MCPOAuthIDP{IDTokenCommand: []string{"echo", "id-token-2", "more"}}, "printed more than one word"},
		{config.MCPOAuthIDP{IDTokenCommand: []string{"no-such-id-token-command"}}, "oauth.idp.idTokenCommand no-such-id-token-command: exec"},
	} {
		err := connect(t, enterprise(tc.idp), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "id-token-2") {
			t.Errorf("%+v: %v, want %q without the token", tc.idp, err, tc.want)
		}
	}
}

// TestOAuthEnterpriseIDTokenEnv: oauth.idp.idTokenEnv names the variable
// the ID token is read from when an exchange needs it; unset, the error
// says so. (Not parallel: it sets the environment.)
func TestOAuthEnterpriseIDTokenEnv(t *testing.T) {
	as := oauthtest.New()
	defer as.Close()
	as.IdentityProvider("id-token-env")
	srv := func(env string) config.MCPServer {
		return config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantEnterprise, ClientID: oauthtest.WebID, ClientSecret: oauthtest.WebSecret,
			IDP: &config.MCPOAuthIDP{Issuer: as.URL, ClientID: "toolbelt", IDTokenEnv: env}}}
	}
	t.Setenv("TOOLBELT_TEST_ID_TOKEN", "id-token-env")
	if err := connect(t, srv("TOOLBELT_TEST_ID_TOKEN"), nil); err != nil {
		t.Errorf("idTokenEnv: %v", err)
	}
	t.Setenv("TOOLBELT_TEST_ID_TOKEN", "")
	if err := connect(t, srv("TOOLBELT_TEST_ID_TOKEN"), nil); err == nil || !strings.Contains(err.Error(), "oauth.idp.idTokenEnv names TOOLBELT_TEST_ID_TOKEN, which is not set or empty") {
		t.Errorf("idTokenEnv unset: %v", err)
	}
}
