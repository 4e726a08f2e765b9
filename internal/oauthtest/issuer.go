package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// KeyID is the key id of an Issuer's signing key in its JWKS.
const KeyID = "k1"

// Issuer is an authorization server that issues JWT access tokens, as a
// resource server's tests need it on 127.0.0.1: RFC 8414 metadata naming
// its JWKS, and the JWKS with its one key (ES256, KeyID).
type Issuer struct {
	// URL is the issuer identifier.
	URL string
	// Key signs its tokens.
	Key *ecdsa.PrivateKey

	fetches atomic.Int32
}

// NewIssuer starts an issuer, stopped when the test ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{Key: NewKey(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		iss.fetches.Add(1)
		writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: iss.Key.Public(), KeyID: KeyID, Algorithm: string(jose.ES256), Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	return iss
}

// Fetches returns how many times its JWKS was fetched.
func (i *Issuer) Fetches() int { return int(i.fetches.Load()) }

// Sign returns a JWT of claims signed with the issuer's key.
func (i *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	return SignJWT(t, i.Key, KeyID, claims)
}

// NewKey returns a new P-256 key.
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// SignJWT returns a JWT (typ JWT) of claims signed with key (ES256) as
// key id kid.
func SignJWT(t testing.TB, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
