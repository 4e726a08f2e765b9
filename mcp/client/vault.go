package client

import (
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"golang.org/x/oauth2"
)

// Grant is what signing in to a server with OAuth left: the token, and
// what refreshing it takes (the client it was issued to and the token
// endpoint). It holds secrets: it is kept sealed (Vault) and never logged.
type Grant struct {
	// Resource is the URL of the server the grant was made for; it is
	// sent to no other (a server whose url changed signs in again).
	Resource string `json:"resource"`
	// ResourceIndicator is the resource the token was asked for (RFC 8707:
	// the protected-resource metadata's), named again on refresh; the
	// server's URL when empty.
	ResourceIndicator string           `json:"resourceIndicator,omitempty"`
	Token             *oauth2.Token    `json:"token"`
	ClientID          string           `json:"clientId"`
	ClientSecret      string           `json:"clientSecret,omitempty"`
	TokenURL          string           `json:"tokenUrl"`
	AuthStyle         oauth2.AuthStyle `json:"authStyle"`
	Scopes            []string         `json:"scopes,omitempty"`
}

// refresh exchanges g's refresh token for a new token (RFC 6749 section
// 6), naming the resource it was granted for (RFC 8707); a token without a
// new refresh token keeps the one it replaces.
func (g *Grant) refresh(ctx context.Context, hc *http.Client) (*oauth2.Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.Token.RefreshToken}, "resource": {cmp.Or(g.ResourceIndicator, g.Resource)}}
	t, _, err := requestToken(ctx, hc, g.TokenURL, oauthClient{id: g.ClientID, secret: g.ClientSecret, style: g.AuthStyle}, form)
	if err != nil {
		return nil, fmt.Errorf("refreshing the OAuth token: %w", err)
	}
	if t.RefreshToken == "" {
		t.RefreshToken = g.Token.RefreshToken
	}
	return t, nil
}

// TokenStore keeps the grants of servers, by server name.
type TokenStore interface {
	// Grant returns the grant kept for server, nil when there is none.
	Grant(ctx context.Context, server string) (*Grant, error)
	// SaveGrant keeps g for server, replacing what was kept.
	SaveGrant(ctx context.Context, server string, g *Grant) error
	// DeleteGrant forgets server's grant; it reports whether there was one.
	DeleteGrant(ctx context.Context, server string) (bool, error)
}

// SealedRows keeps one opaque value per server (store.Tokens).
type SealedRows interface {
	Get(ctx context.Context, server string) ([]byte, error)
	Put(ctx context.Context, server string, sealed []byte) error
	Delete(ctx context.Context, server string) (bool, error)
}

// MinTokenKeyBytes is the shortest key a Vault takes.
const MinTokenKeyBytes = 16

// Vault is a TokenStore that seals each grant with AES-256-GCM before it
// reaches its rows, under a key kept outside them; the server's name is
// the seal's additional data, so a row moved to another server does not
// open.
type Vault struct {
	rows SealedRows
	aead cipher.AEAD
}

// NewVault returns a Vault over rows whose AES key is derived from key (at
// least MinTokenKeyBytes of secret, e.g. 32 random bytes in hex).
func NewVault(rows SealedRows, key []byte) (*Vault, error) {
	if len(key) < MinTokenKeyBytes {
		return nil, fmt.Errorf("the token key has %d bytes: it needs at least %d (e.g. the output of openssl rand -hex 32)", len(key), MinTokenKeyBytes)
	}
	sum := sha256.Sum256(key)
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Vault{rows: rows, aead: aead}, nil
}

// ErrTokenKey is the error of a sealed grant the key does not open: the
// key changed, or the row was not sealed for this server.
var ErrTokenKey = errors.New("the stored sign-in does not open with this token key (TOOLBELT_TOKEN_KEY changed?): sign in again")

// Grant opens the grant kept for server.
func (v *Vault) Grant(ctx context.Context, server string) (*Grant, error) {
	sealed, err := v.rows.Get(ctx, server)
	if err != nil || sealed == nil {
		return nil, err
	}
	n := v.aead.NonceSize()
	if len(sealed) < n {
		return nil, ErrTokenKey
	}
	plain, err := v.aead.Open(nil, sealed[:n], sealed[n:], []byte(server))
	if err != nil {
		return nil, ErrTokenKey
	}
	var g Grant
	if err := json.Unmarshal(plain, &g); err != nil || g.Token == nil {
		return nil, ErrTokenKey
	}
	return &g, nil
}

// SaveGrant seals g and keeps it for server.
func (v *Vault) SaveGrant(ctx context.Context, server string, g *Grant) error {
	plain, err := json.Marshal(g)
	if err != nil {
		return err
	}
	nonce := make([]byte, v.aead.NonceSize())
	rand.Read(nonce)
	return v.rows.Put(ctx, server, v.aead.Seal(nonce, nonce, plain, []byte(server)))
}

// DeleteGrant forgets server's grant.
func (v *Vault) DeleteGrant(ctx context.Context, server string) (bool, error) {
	return v.rows.Delete(ctx, server)
}
