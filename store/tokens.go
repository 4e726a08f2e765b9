package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Tokens keeps one sealed value per imported MCP server: its OAuth grant,
// encrypted by the caller before it gets here (mcp/client.Vault).
type Tokens struct{ s *Store }

// Tokens returns the store's sealed OAuth grants.
func (s *Store) Tokens() *Tokens { return &Tokens{s: s} }

// Get returns the sealed value kept for server, nil when there is none.
func (t *Tokens) Get(ctx context.Context, server string) ([]byte, error) {
	var sealed []byte
	err := t.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, "SELECT sealed FROM oauth_tokens WHERE server = ?", server).Scan(&sealed)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token of %s: %w", server, err)
	}
	return sealed, nil
}

// Put keeps sealed for server, replacing what was kept.
func (t *Tokens) Put(ctx context.Context, server string, sealed []byte) error {
	err := t.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO oauth_tokens (server, sealed, updated_ns) VALUES (?, ?, ?)
ON CONFLICT (server) DO UPDATE SET sealed = excluded.sealed, updated_ns = excluded.updated_ns`, server, sealed, t.s.now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping the token of %s: %w", server, err)
	}
	return nil
}

// Delete forgets what is kept for server; it reports whether there was
// anything.
func (t *Tokens) Delete(ctx context.Context, server string) (bool, error) {
	var n int64
	err := t.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, "DELETE FROM oauth_tokens WHERE server = ?", server)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("forgetting the token of %s: %w", server, err)
	}
	return n > 0, nil
}
