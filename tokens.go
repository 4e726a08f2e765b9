package toolbelt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolbelt/toolbelt/mcp/client"
)

// TokenKeyFile is the file of the key that seals the OAuth grants of
// imported servers when Options.TokenKey is not set: in the data
// directory, beside the database, never inside it.
const TokenKeyFile = "oauth-token.key"

// importTokens is the imported servers' OAuth grants, sealed in the store
// (client.Vault). The imports start before the store opens: each use waits
// for it.
type importTokens struct {
	tb    *Toolbelt
	ready chan struct{} // closed once the store is open (or opens on use)
	vault func() (*client.Vault, error)
}

func newImportTokens(tb *Toolbelt) *importTokens {
	t := &importTokens{tb: tb, ready: make(chan struct{})}
	t.vault = sync.OnceValues(t.open)
	return t
}

// open makes the vault over the store's token rows, with the configured
// key or the key file's.
func (t *importTokens) open() (*client.Vault, error) {
	st := t.tb.st
	if t.tb.lazyStore != nil {
		var err error
		if st, err = t.tb.lazyStore(); err != nil {
			return nil, err
		}
	}
	key := t.tb.opts.TokenKey
	if key == nil {
		var err error
		if key, err = keyFile(t.tb.data); err != nil {
			return nil, err
		}
	}
	return client.NewVault(st.Tokens(), key)
}

// keyFile returns the key in dir's key file, made (0600, 32 random bytes
// in hex) when there is none.
func keyFile(dir string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("the OAuth tokens of imported servers are sealed with a key: with PostgreSQL set TOOLBELT_TOKEN_KEY or TOOLBELT_TOKEN_KEY_FILE")
	}
	path := filepath.Join(dir, TokenKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return newKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token key: %w", err)
	}
	return bytes.TrimSpace(b), nil
}

// newKeyFile makes the key file at path whole (written aside, then
// linked into place), or reads the one another process made meanwhile.
func newKeyFile(path string) ([]byte, error) {
	key := []byte(rand.Text() + rand.Text())
	tmp, err := os.CreateTemp(filepath.Dir(path), TokenKeyFile+".*")
	if err != nil {
		return nil, fmt.Errorf("making the token key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(key, '\n'))
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("making the token key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
		return keyFile(filepath.Dir(path))
	} else if err != nil {
		return nil, fmt.Errorf("making the token key: %w", err)
	}
	return key, nil
}

// get waits for the store, then returns the vault.
func (t *importTokens) get(ctx context.Context) (*client.Vault, error) {
	select {
	case <-t.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return t.vault()
}

// Grant implements client.TokenStore.
func (t *importTokens) Grant(ctx context.Context, server string) (*client.Grant, error) {
	v, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	return v.Grant(ctx, server)
}

// SaveGrant implements client.TokenStore.
func (t *importTokens) SaveGrant(ctx context.Context, server string, g *client.Grant) error {
	v, err := t.get(ctx)
	if err != nil {
		return err
	}
	return v.SaveGrant(ctx, server, g)
}

// DeleteGrant implements client.TokenStore.
func (t *importTokens) DeleteGrant(ctx context.Context, server string) (bool, error) {
	v, err := t.get(ctx)
	if err != nil {
		return false, err
	}
	return v.DeleteGrant(ctx, server)
}
