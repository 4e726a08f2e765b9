package client

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// assertionType is RFC 7523's client assertion type: a JWT.
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is good for.
const assertionLifetime = 5 * time.Minute

// jwtClient is a client_credentials client that authenticates with a JWT
// signed by its private key (private_key_jwt, RFC 7523) instead of a
// secret. It is an auth.OAuthHandler.
type jwtClient struct {
	id     string
	signer jose.Signer
	hc     *http.Client
	ts     oauth2.TokenSource
}

// newJWTClient reads the PEM private key (PKCS #8, PKCS #1 RSA or SEC 1
// EC) of client id at path. It signs with RS256, or with the ECDSA
// algorithm of the key's curve (ES256 for P-256, ES384 for P-384, ES512
// for P-521).
func newJWTClient(id, path string, hc *http.Client) (*jwtClient, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("oauth.privateKeyFile: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("oauth.privateKeyFile %s holds no PEM block", path)
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			key, err = x509.ParseECPrivateKey(block.Bytes)
		}
	}
	alg, algErr := signingAlgorithm(key)
	if algErr != nil {
		return nil, fmt.Errorf("oauth.privateKeyFile %s: %w", path, cmp.Or(err, algErr))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, fmt.Errorf("oauth.privateKeyFile %s: %w", path, err)
	}
	return &jwtClient{id: id, signer: signer, hc: hc}, nil
}

// signingAlgorithm is the JWS algorithm of key: RS256 for RSA, and for
// ECDSA the one its curve names (RFC 7518 section 3.4).
func signingAlgorithm(key any) (jose.SignatureAlgorithm, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("an EC key on the curve %s, which JWS does not sign with (P-256, P-384 or P-521)", k.Curve.Params().Name)
	}
	return "", errors.New("not an RSA or EC private key")
}

// TokenSource returns the source of tokens once Authorize ran.
func (c *jwtClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if c.ts == nil {
		return nil, nil
	}
	return c.ts, nil
}

// Authorize finds the token endpoint from the server's 401, as a sign-in
// does, and gets a token with a fresh assertion.
func (c *jwtClient) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	discard(resp)
	as, err := discover(ctx, challenges, req.URL.String(), c.hc)
	if err != nil {
		return err
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {assertionType}, "resource": {as.resource}}
	if scope := bearerParam(challenges, "scope"); scope != "" {
		form.Set("scope", scope)
	}
	ts := oauth2.ReuseTokenSource(nil, tokenSourceFunc(func() (*oauth2.Token, error) {
		assertion, err := c.assertion(as.meta.Issuer)
		if err != nil {
			return nil, err
		}
		form := cloneValues(form)
		form.Set("client_assertion", assertion)
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		t, _, err := requestToken(ctx, c.hc, as.meta.TokenEndpoint, oauthClient{id: c.id}, form)
		return t, err
	}))
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("client credentials with a JWT: %w", err)
	}
	c.ts = ts
	return nil
}

// tokenSourceFunc is a function as an oauth2.TokenSource.
type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// assertion is a JWT naming the client (iss, sub) and the authorization
// server's issuer identifier (aud: draft-ietf-oauth-rfc7523bis, which
// RFC 7523's token endpoint URL gave way to), signed with the client's key.
func (c *jwtClient) assertion(audience string) (string, error) {
	now := time.Now()
	return jwt.Signed(c.signer).Claims(jwt.Claims{Issuer: c.id, Subject: c.id, Audience: jwt.Audience{audience}, ID: rand.Text(),
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(assertionLifetime))}).Serialize()
}
