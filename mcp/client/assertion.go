package client

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// assertionType is RFC 7523's client assertion type: a JWT.
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is good for.
const assertionLifetime = 5 * time.Minute

// jwtClient is a client_credentials client that authenticates with a JWT
// signed by its private key (private_key_jwt, RFC 7523) instead of a
// secret. It is an auth.OAuthHandler.
type jwtClient struct {
	id  string
	key crypto.Signer
	hc  *http.Client
	ts  oauth2.TokenSource
}

// newJWTClient reads the PEM private key (PKCS #8, PKCS #1 RSA or SEC 1
// EC) of client id at path.
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
	switch key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey:
		return &jwtClient{id: id, key: key.(crypto.Signer), hc: hc}, nil
	}
	return nil, fmt.Errorf("oauth.privateKeyFile %s: not an RSA or EC private key (%v)", path, err)
}

// TokenSource returns the source of tokens once Authorize ran.
func (c *jwtClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if c.ts == nil {
		return nil, nil
	}
	return c.ts, nil
}

// Authorize finds the token endpoint from the server's 401 and gets a
// token with a fresh assertion.
func (c *jwtClient) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	discard(resp)
	tokenURL, issuer, resource, err := findTokenEndpoint(ctx, challenges, req.URL.String(), c.hc)
	if err != nil {
		return err
	}
	scopes := strings.Fields(bearerParam(challenges, "scope"))
	ts := oauth2.ReuseTokenSource(nil, tokenSourceFunc(func() (*oauth2.Token, error) {
		assertion, err := c.assertion(issuer)
		if err != nil {
			return nil, err
		}
		cfg := &clientcredentials.Config{TokenURL: tokenURL, Scopes: scopes, AuthStyle: oauth2.AuthStyleInParams,
			EndpointParams: url.Values{"client_id": {c.id}, "client_assertion_type": {assertionType}, "client_assertion": {assertion}, "resource": {resource}}}
		return cfg.Token(context.WithValue(context.Background(), oauth2.HTTPClient, c.hc))
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
// RFC 7523's token endpoint URL gave way to), signed with RS256 or ES256.
func (c *jwtClient) assertion(audience string) (string, error) {
	alg := "RS256"
	if _, ec := c.key.(*ecdsa.PrivateKey); ec {
		alg = "ES256"
	}
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": c.id, "sub": c.id, "aud": audience, "jti": rand.Text(),
		"iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix()})
	signed := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	var sig []byte
	var err error
	switch k := c.key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	case *ecdsa.PrivateKey:
		var der []byte
		if der, err = ecdsa.SignASN1(rand.Reader, k, sum[:]); err == nil {
			sig, err = rawECDSA(der, (k.Curve.Params().BitSize+7)/8)
		}
	}
	if err != nil {
		return "", err
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// rawECDSA turns an ASN.1 ECDSA signature into JOSE's r||s, each size
// bytes.
func rawECDSA(der []byte, size int) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &sig); err != nil {
		return nil, err
	}
	out := make([]byte, 2*size)
	sig.R.FillBytes(out[:size])
	sig.S.FillBytes(out[size:])
	return out, nil
}

// findTokenEndpoint finds the token endpoint of the authorization server
// of the server at serverURL, as a sign-in does: the protected-resource
// metadata its challenge names or the well-known ones (RFC 9728), then the
// authorization server's metadata (RFC 8414 or OpenID), else the
// 2025-03-26 default (/token at the server's root). It returns the
// authorization server's issuer identifier and the resource to name (RFC
// 8707) too.
func findTokenEndpoint(ctx context.Context, challenges []oauthex.Challenge, serverURL string, hc *http.Client) (tokenURL, issuer, resource string, err error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", "", "", err
	}
	root := u.Scheme + "://" + u.Host
	issuer, resource = root, serverURL
	var candidates [][2]string // metadata URL, its resource
	for _, c := range challenges {
		if m := c.Params["resource_metadata"]; m != "" {
			candidates = append(candidates, [2]string{m, serverURL})
		}
	}
	candidates = append(candidates, [2]string{root + "/.well-known/oauth-protected-resource" + u.Path, serverURL},
		[2]string{root + "/.well-known/oauth-protected-resource", root})
	for _, c := range candidates {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c[0], c[1], hc)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			issuer, resource = prm.AuthorizationServers[0], prm.Resource
			break
		}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	switch {
	case err != nil:
		return "", "", "", fmt.Errorf("the authorization server's metadata: %w", err)
	case asm == nil || asm.TokenEndpoint == "":
		return strings.TrimSuffix(issuer, "/") + "/token", issuer, resource, nil
	}
	return asm.TokenEndpoint, cmp.Or(asm.Issuer, issuer), resource, nil
}
