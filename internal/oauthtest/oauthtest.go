// Package oauthtest is a small OAuth 2.1 authorization server and an MCP
// server it protects, for tests of Toolbelt's OAuth client on 127.0.0.1:
// RFC 8414 metadata, RFC 7591 dynamic registration, the authorization code
// grant with PKCE S256 only and the RFC 8707 resource checked, refresh
// tokens rotated on every use (a used one is refused), the client
// credentials grant for a pre-registered confidential client, and the MCP
// server behind bearer validation with RFC 9728 protected-resource
// metadata and scope step-up (403 insufficient_scope); on demand a
// confidential web client, the device authorization grant, the 2025-03-26
// layout, and an enterprise identity provider (token exchange for an
// ID-JAG, taken as a JWT bearer grant).
// /authorize approves at once: a test's HTTP client following its
// redirect plays the person's browser.
package oauthtest

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Server is the authorization server and the protected MCP server, on one
// listener: the MCP endpoint is URL+"/mcp".
type Server struct {
	// URL is the issuer, and the base of the MCP endpoint.
	URL string
	// Lifetime is how long access tokens last (an hour).
	Lifetime time.Duration

	http *httptest.Server

	mu       sync.Mutex
	clients  map[string][]string // registered client id → redirect URIs
	codes    map[string]code
	access   map[string]grant // access token → what it grants
	refresh  map[string]grant // refresh token → what it grants, while usable
	issued   []string         // every token issued
	counts   map[string]int   // grant type → token requests granted
	asked    []string         // the scopes of the last authorization request
	required string           // the scope calls need beside "tools"
	machine  *ecdsa.PublicKey // verifies the machine client's assertions
	document string           // the client ID metadata document taken as a client id
	resource string
	withheld string             // a scope never granted
	legacy   string             // the issuer of 2025-03-26 mode's metadata; "" when off
	auths    []string           // how each token request's client authenticated
	idToken  string             // the ID token the token exchange takes
	jags     map[string]string  // identity assertion grants issued → their resource
	device   bool               // the device authorization grant is offered
	devices  map[string]*device // device code → its sign-in
}

// device is a device authorization grant's sign-in (RFC 8628).
type device struct {
	client, userCode, resource, scope string
	approved                          bool
}

type code struct {
	client, redirect, challenge, resource, scope string
}

// grant is what a token grants, until when.
type grant struct {
	scopes  []string
	expires time.Time
}

// The pre-registered confidential client, for the client credentials
// grant (client_secret_basic or client_secret_post).
const (
	MachineID     = "machine"
	MachineSecret = "machine-secret"
)

// The pre-registered confidential client of the authorization code grant
// (any loopback redirect) and of the enterprise grant's JWT bearer grant:
// it authenticates with its secret, client_secret_basic or
// client_secret_post.
const (
	WebID     = "web"
	WebSecret = "web-secret"
)

// New starts the servers; Close stops them. The MCP server has one tool,
// echo, that returns its text argument.
func New() *Server {
	s := &Server{Lifetime: time.Hour, clients: map[string][]string{}, codes: map[string]code{},
		access: map[string]grant{}, refresh: map[string]grant{}, counts: map[string]int{}, jags: map[string]string{}, devices: map[string]*device{}}
	mux := http.NewServeMux()
	s.http = httptest.NewServer(mux)
	s.URL = s.http.URL
	s.resource = s.URL + "/mcp"
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	prm := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.resource, AuthorizationServers: []string{s.URL}, ScopesSupported: []string{"tools"},
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		if s.legacyIssuer() != "" {
			http.NotFound(w, r)
			return
		}
		prm.ServeHTTP(w, r)
	})
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("POST /device_authorization", s.deviceAuthorization)
	mux.HandleFunc("GET /device", s.approveDevice)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.Handle("/mcp", s.protect(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echoServer() }, nil)))
	return s
}

// Close stops the servers.
func (s *Server) Close() { s.http.Close() }

// Expire makes every access token issued so far refused, as expired ones
// are, while the client still holds them.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// Require makes calls need scope beside "tools": a token without it gets
// 403 insufficient_scope naming it.
func (s *Server) Require(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.required = scope
}

// Withhold makes the server never grant scope, though asked for it.
func (s *Server) Withhold(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.withheld = scope
}

// Legacy makes the server a 2025-03-26 one: no protected-resource
// metadata, a challenge naming none, and authorization server metadata at
// the root whose issuer is issuer (the path of another URL).
func (s *Server) Legacy(issuer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.legacy = issuer
}

func (s *Server) legacyIssuer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.legacy
}

// ClientAuth returns how the client authenticated at each token request
// so far, in order: client_secret_basic, client_secret_post or none.
func (s *Server) ClientAuth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.auths)
}

// IdentityProvider makes the server the enterprise identity provider too:
// its token endpoint exchanges idToken (RFC 8693, subject_token_type
// id_token) for an identity assertion grant (ID-JAG) that its JWT bearer
// grant takes from the web client, for the resource it was issued for.
func (s *Server) IdentityProvider(idToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idToken = idToken
}

// DeviceFlow makes the server offer the device authorization grant (RFC
// 8628): its verification page approves the code in its user_code
// parameter at once, as the person would.
func (s *Server) DeviceFlow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.device = true
}

// AcceptDocument makes the server accept the client ID metadata
// document at url as a client id, with any loopback redirect (the
// document is taken as read, not fetched).
func (s *Server) AcceptDocument(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.document = url
}

// Registered returns how many clients registered themselves (RFC 7591).
func (s *Server) Registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// TrustKey makes the machine client authenticate with JWTs (RFC 7523)
// signed by the private key of pub (ES256, ES384 or ES512 by its curve),
// instead of its secret.
func (s *Server) TrustKey(pub *ecdsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.machine = pub
}

// verifyAssertion checks a client assertion: signed by the trusted key
// with the algorithm of its curve, naming the machine client and, as its
// audience, the server's issuer identifier (draft-ietf-oauth-rfc7523bis),
// not expired; s.mu is held.
func (s *Server) verifyAssertion(assertion string) bool {
	if s.machine == nil {
		return false
	}
	alg := map[int]jose.SignatureAlgorithm{256: jose.ES256, 384: jose.ES384, 521: jose.ES512}[s.machine.Curve.Params().BitSize]
	tok, err := jwt.ParseSigned(assertion, []jose.SignatureAlgorithm{alg})
	if err != nil {
		return false
	}
	var claims jwt.Claims
	if tok.Claims(s.machine, &claims) != nil || claims.Expiry == nil {
		return false
	}
	return claims.Validate(jwt.Expected{Issuer: MachineID, Subject: MachineID, AnyAudience: jwt.Audience{s.URL}, Time: time.Now()}) == nil
}

// Asked returns the scopes of the last authorization request.
func (s *Server) Asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// Granted returns how many token requests of grant type grant were
// granted (authorization_code, refresh_token).
func (s *Server) Granted(grant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[grant]
}

// Issued returns every access and refresh token issued.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

func echoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns its text."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	return srv
}

// protect lets through requests with a live access token; others get a
// 401 naming the protected-resource metadata.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		g, ok := s.access[tok]
		required := s.required
		legacy := s.legacy
		s.mu.Unlock()
		if !ok || time.Now().After(g.expires) {
			challenge := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="tools"`, s.URL)
			if legacy != "" {
				challenge = `Bearer scope="tools"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		if required != "" && !slices.Contains(g.scopes, required) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, required, s.URL))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	documents := s.document != ""
	issuer := cmp.Or(s.legacy, s.URL)
	deviceFlow := s.device
	s.mu.Unlock()
	meta := map[string]any{
		"client_id_metadata_document_supported": documents,
		"issuer":                                issuer,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"registration_endpoint":                 s.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials", tokenExchange, jwtBearer},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		"scopes_supported":                      []string{"tools", "offline_access"},
	}
	if deviceFlow {
		meta["device_authorization_endpoint"] = s.URL + "/device_authorization"
	}
	writeJSON(w, http.StatusOK, meta)
}

// deviceAuthorization starts a device sign-in of a registered client
// for the server's resource (RFC 8628 section 3.1).
func (s *Server) deviceAuthorization(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, known := s.clients[r.PostForm.Get("client_id")]
	switch {
	case !s.device || !known:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client"})
	case r.PostForm.Get("resource") != s.resource:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_target"})
	default:
		code, user := "dc-"+rand.Text(), rand.Text()[:8]
		s.devices[code] = &device{client: r.PostForm.Get("client_id"), userCode: user, resource: s.resource, scope: r.PostForm.Get("scope")}
		writeJSON(w, http.StatusOK, map[string]any{"device_code": code, "user_code": user, "verification_uri": s.URL + "/device",
			"verification_uri_complete": s.URL + "/device?user_code=" + user, "expires_in": 600, "interval": 1})
	}
}

// approveDevice is the verification page: it approves the sign-in of its
// user_code.
func (s *Server) approveDevice(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.userCode == r.URL.Query().Get("user_code") {
			d.approved = true
			fmt.Fprintln(w, "Approved: return to your device.")
			return
		}
	}
	http.Error(w, "unknown code", http.StatusNotFound)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) == 0 && !slices.Contains(req.GrantTypes, deviceGrant) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
		return
	}
	id := rand.Text()
	s.mu.Lock()
	s.clients[id] = req.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize approves at once and redirects with a code, after checking
// the request as a careful server does.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	redirects, known := s.clients[q.Get("client_id")]
	if (s.document != "" && q.Get("client_id") == s.document || q.Get("client_id") == WebID) && strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		redirects, known = []string{q.Get("redirect_uri")}, true
	}
	switch {
	case !known || !slices.Contains(redirects, q.Get("redirect_uri")):
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "response_type code with a PKCE S256 challenge is required", http.StatusBadRequest)
	case q.Get("resource") != s.resource:
		http.Error(w, "resource must be "+s.resource, http.StatusBadRequest)
	default:
		c := rand.Text()
		scope := slices.DeleteFunc(strings.Fields(q.Get("scope")), func(sc string) bool { return sc == s.withheld })
		s.codes[c] = code{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: strings.Join(scope, " ")}
		s.asked = strings.Fields(q.Get("scope"))
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", c)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(e string) { writeJSON(w, http.StatusBadRequest, map[string]string{"error": e}) }
	id, secret, method := clientAuth(r)
	s.auths = append(s.auths, method)
	if id == WebID && secret != WebSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	switch grant := f.Get("grant_type"); grant {
	case "authorization_code":
		c, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || c.client != id || c.redirect != f.Get("redirect_uri"):
			fail("invalid_grant")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			fail("invalid_grant") // the PKCE verifier does not match
		case f.Get("resource") != c.resource:
			fail("invalid_target")
		default:
			s.grant(w, grant, strings.Fields(c.scope))
		}
	case "refresh_token":
		g, ok := s.refresh[f.Get("refresh_token")]
		switch {
		case !ok:
			fail("invalid_grant") // unknown, or used already: rotated
			return
		case f.Get("resource") != s.resource:
			fail("invalid_target") // RFC 8707: the resource is named again
			return
		}
		delete(s.refresh, f.Get("refresh_token"))
		s.grant(w, grant, g.scopes)
	case tokenExchange:
		switch {
		case s.idToken == "" || f.Get("subject_token") != s.idToken || f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
			fail("invalid_grant")
		case f.Get("requested_token_type") != idJAG || f.Get("audience") != s.URL || f.Get("resource") != s.resource:
			fail("invalid_request")
		default:
			jag := "jag-" + rand.Text()
			s.jags[jag] = f.Get("resource")
			s.issued = append(s.issued, jag)
			s.counts[grant]++
			writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": idJAG, "token_type": "N_A", "expires_in": 300})
		}
	case jwtBearer:
		resource, ok := s.jags[f.Get("assertion")]
		delete(s.jags, f.Get("assertion"))
		switch {
		case id != WebID:
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		case !ok || resource != s.resource:
			fail("invalid_grant")
		default:
			s.grant(w, grant, strings.Fields(f.Get("scope")))
		}
	case deviceGrant:
		d, ok := s.devices[f.Get("device_code")]
		switch {
		case !ok || d.client != id:
			fail("invalid_grant")
		case f.Get("resource") != d.resource:
			fail("invalid_target")
		case !d.approved:
			fail("authorization_pending")
		default:
			delete(s.devices, f.Get("device_code"))
			s.grant(w, grant, strings.Fields(d.scope))
		}
	case "client_credentials":
		ok := id == MachineID && secret == MachineSecret
		if f.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			ok = s.verifyAssertion(f.Get("client_assertion")) && f.Get("resource") == s.resource
		}
		if !ok {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		s.grant(w, grant, strings.Fields(f.Get("scope")))
	default:
		fail("unsupported_grant_type")
	}
}

// grant issues a new access token for scopes, and a refresh token but
// to a machine client; s.mu is held.
func (s *Server) grant(w http.ResponseWriter, kind string, scopes []string) {
	g := grant{scopes: scopes, expires: time.Now().Add(s.Lifetime)}
	access := "at-" + rand.Text()
	s.access[access] = g
	s.issued = append(s.issued, access)
	s.counts[kind]++
	answer := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.Lifetime.Seconds()), "scope": strings.Join(scopes, " ")}
	if kind != "client_credentials" {
		refresh := "rt-" + rand.Text()
		s.refresh[refresh] = g
		s.issued = append(s.issued, refresh)
		answer["refresh_token"] = refresh
	}
	writeJSON(w, http.StatusOK, answer)
}

// clientAuth is the client a token request names, its secret, and how
// it sent them: in its basic authentication (client_secret_basic), its
// form (client_secret_post), or its id alone (none).
func clientAuth(r *http.Request) (id, secret, method string) {
	if id, secret, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id) // RFC 6749 2.3.1 form-encodes them
		secret, _ = url.QueryUnescape(secret)
		return id, secret, "client_secret_basic"
	}
	if r.PostForm.Get("client_secret") != "" {
		return r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), "client_secret_post"
	}
	return r.PostForm.Get("client_id"), "", "none"
}

// The grant types and token type of enterprise-managed authorization.
const (
	tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	jwtBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	idJAG         = "urn:ietf:params:oauth:token-type:id-jag"
	deviceGrant   = "urn:ietf:params:oauth:grant-type:device_code"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
