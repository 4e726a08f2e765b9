package mcp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/oauthtest"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/policy"
)

// TestHTTPOAuthResourceServer: with mcp.oauth the server publishes its
// protected-resource metadata, answers 401 naming it, accepts JWTs of the
// issuer for its resource (the principal from the scope map, else the sub
// claim; the owner scope makes the owner), refuses tokens of another
// audience, issuer or key, expired ones, and answers 403
// insufficient_scope to a token with none of its scopes; static tokens keep
// working.
func TestHTTPOAuthResourceServer(t *testing.T) {
	t.Parallel()
	iss := oauthtest.NewIssuer(t)
	const resource = "https://tools.example/mcp"
	oauth := &mcp.OAuth{
		Issuer: iss.URL, Resource: resource,
		Scopes:     []string{"tools.admin", "tools.use"},
		Principals: map[string]string{"tools.admin": "admins"},
		OwnerScope: "tools.admin",
	}
	log := &auditLog{}
	srv := newServer(t, newFixture(t), mcp.Options{}, log)
	url := serveLimited(t, srv, mcp.HTTPOptions{OAuth: oauth, Tokens: []mcp.Token{{Token: "static-token", Principal: "ci"}}}).URL

	metaURL := "https://tools.example/.well-known/oauth-protected-resource/mcp"
	resp, body := postJSON(t, url, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(got, `resource_metadata="`+metaURL+`"`) {
		t.Errorf("no token: %d, WWW-Authenticate %q: %s", resp.StatusCode, got, body)
	}
	if oauth.MetadataPath() != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("metadata path %q", oauth.MetadataPath())
	}
	rec := httptest.NewRecorder()
	oauth.MetadataHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, oauth.MetadataPath(), nil))
	var meta struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
		Scopes   []string `json:"scopes_supported"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil || meta.Resource != resource || len(meta.Servers) != 1 || meta.Servers[0] != iss.URL || len(meta.Scopes) != 2 {
		t.Errorf("metadata %s (%v)", rec.Body, err)
	}

	now := time.Now()
	claims := func(sub, scope string) map[string]any {
		return map[string]any{"iss": iss.URL, "aud": resource, "sub": sub, "scope": scope, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	}
	with := func(c map[string]any, k string, v any) map[string]any { c[k] = v; return c }
	refused := map[string]string{
		"another audience": iss.Sign(t, with(claims("ada", "tools.use"), "aud", "https://elsewhere.example/mcp")),
		"another issuer":   iss.Sign(t, with(claims("ada", "tools.use"), "iss", "https://issuer.example")),
		"expired":          iss.Sign(t, with(claims("ada", "tools.use"), "exp", now.Add(-time.Hour).Unix())),
		"no expiry":        iss.Sign(t, func() map[string]any { c := claims("ada", "tools.use"); delete(c, "exp"); return c }()),
		"another key":      oauthtest.SignJWT(t, oauthtest.NewKey(t), oauthtest.KeyID, claims("ada", "tools.use")),
		"not a JWT":        "tools.use",
	}
	for name, token := range refused {
		resp, body := postJSON(t, url, "", token, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(got, `error="invalid_token"`) || !strings.Contains(got, metaURL) {
			t.Errorf("%s: %d, WWW-Authenticate %q: %s", name, resp.StatusCode, got, body)
		}
	}
	// Tokens naming keys the issuer never had do not each fetch its keys
	// again (one fetch, made for the first token, serves them all).
	for i := range 5 {
		resp, _ := postJSON(t, url, "", oauthtest.SignJWT(t, oauthtest.NewKey(t), fmt.Sprintf("made-up-%d", i), claims("ada", "tools.use")), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a token of a made-up key: %d", resp.StatusCode)
		}
	}
	if n := iss.Fetches(); n != 1 {
		t.Errorf("the issuer's keys were fetched %d times, want once", n)
	}
	resp, body = postJSON(t, url, "", iss.Sign(t, claims("ada", "email")), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(got, `error="insufficient_scope"`) || !strings.Contains(got, `scope="tools.admin tools.use"`) {
		t.Errorf("no advertised scope: %d, WWW-Authenticate %q: %s", resp.StatusCode, got, body)
	}

	admin, err := httpClient(t, url, iss.Sign(t, claims("grace", "openid tools.admin")))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	user, err := httpClient(t, url, iss.Sign(t, claims("ada", "tools.use")))
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	static, err := httpClient(t, url, "static-token")
	if err != nil {
		t.Fatal(err)
	}
	defer static.Close()
	if res := callTool(t, admin, "big", nil); res.IsError {
		t.Errorf("the owner scope's token calls an owner-only tool: %q", texts(res)[:80])
	}
	if res := callTool(t, user, "big", nil); !res.IsError || !strings.Contains(texts(res), policy.OwnerOnlyReason) {
		t.Errorf("a token without the owner scope calls an owner-only tool: %q", texts(res))
	}
	callTool(t, static, "greet", map[string]any{"name": "CI"})
	recs := log.records()
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	for i, want := range []struct {
		principal string
		owner     bool
	}{{"admins", true}, {mcp.ClaimPrincipal + "ada", false}, {"ci", false}} {
		if r := recs[i]; r.Principal != want.principal || r.Owner != want.owner {
			t.Errorf("record %d: principal %q owner %v, want %+v", i, r.Principal, r.Owner, want)
		}
	}
}
