package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/oauthtest"
)

// `toolbelt serve` with mcp.oauth: it serves its protected-resource
// metadata, answers 401 naming it, and opens a session for a JWT the
// issuer (a JWKS server on 127.0.0.1, found through its RFC 8414 metadata)
// signed for its resource, but not for one of another audience.
func TestServeOAuthResourceServer(t *testing.T) {
	t.Parallel()
	issuer := oauthtest.NewIssuer(t)
	token := func(aud string) string {
		return issuer.Sign(t, map[string]any{"iss": issuer.URL, "aud": aud, "sub": "ada", "scope": "tools", "exp": time.Now().Add(time.Hour).Unix()})
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
