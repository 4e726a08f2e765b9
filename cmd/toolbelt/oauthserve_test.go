package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// `toolbelt serve` with mcp.oauth: it serves its protected-resource
// metadata, answers 401 naming it, and opens a session for a JWT the
// issuer (a JWKS server on 127.0.0.1, found through its RFC 8414 metadata)
// signed for its resource, but not for one of another audience.
func TestServeOAuthResourceServer(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	issuer := httptest.NewServer(mux)
	defer issuer.Close()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": issuer.URL, "jwks_uri": issuer.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	token := func(aud string) string {
		s, err := jwt.Signed(signer).Claims(map[string]any{"iss": issuer.URL, "aud": aud, "sub": "ada", "scope": "tools", "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const resource = "https://tools.example/mcp"
	cfg := writeConfig(t, "mcp:\n  oauth:\n    issuer: "+issuer.URL+"\n    resource: "+resource+"\n    scopes: [tools]\n")
	url, _, stderr := startServe(t, cliEnvironment(t), "--config", cfg, "--workspace", t.TempDir())
	base := strings.TrimSuffix(url, "/mcp")

	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Resource != resource || len(meta.Servers) != 1 || meta.Servers[0] != issuer.URL {
		t.Errorf("metadata %+v (%v)", meta, err)
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(got, `resource_metadata="https://tools.example/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("no token: %d, WWW-Authenticate %q", resp.StatusCode, got)
	}
	if code, body := postMCP(t, url, initialize, "Authorization", "Bearer "+token("https://elsewhere.example/mcp")); code != http.StatusUnauthorized {
		t.Errorf("a token for another resource: %d %s", code, body)
	}
	if code, body := postMCP(t, url, initialize, "Authorization", "Bearer "+token(resource)); code != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
		t.Errorf("the issuer's token for this resource: %d %s\n%s", code, body, stderr)
	}
}
