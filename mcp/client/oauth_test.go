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
	"net/http"
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
// JWT its private key signs (private_key_jwt), which the authorization
// server verifies with the public key; another key is refused.
func TestOAuthClientCredentialsJWT(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	dir := t.TempDir()
	keyFile := func(name string) (string, *ecdsa.PrivateKey) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
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
	trusted, key := keyFile("trusted.pem")
	other, _ := keyFile("other.pem")
	as.TrustKey(&key.PublicKey)
	for path, ok := range map[string]bool{trusted: true, other: false} {
		srv := config.MCPServer{URL: as.URL + "/mcp", OAuth: &config.MCPOAuth{Grant: config.GrantClientCredentials,
			ClientID: oauthtest.MachineID, PrivateKeyFile: path}}
		if err := connect(t, srv, nil); (err == nil) != ok {
			t.Errorf("%s: %v", filepath.Base(path), err)
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
