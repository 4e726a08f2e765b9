package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CacheOptions bound what Cache keeps; the zero value keeps the defaults.
type CacheOptions struct {
	// MaxBytes is the total size of the values kept: past it, the oldest
	// go first. Default 64 MiB.
	MaxBytes int64
}

// Cache keeps short-lived values by key until they expire (the web tools'
// cache, a web.Cache).
type Cache struct {
	s *Store
	o CacheOptions
}

// Cache returns the store's cache, bounded by o.
func (s *Store) Cache(o CacheOptions) *Cache {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	return &Cache{s: s, o: o}
}

// Put keeps value under key for ttl, replacing what was kept under it, and
// lets go of values that expired or are past the size bound. A ttl of zero
// or less keeps nothing.
func (c *Cache) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if key == "" {
		return errors.New("caching a value: the key is empty")
	}
	if ttl <= 0 || int64(len(value)) > c.o.MaxBytes {
		return nil
	}
	now := c.s.now()
	err := c.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM cache WHERE cache_key = ? OR expires_ns < ?", key, now.UnixNano()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO cache (cache_key, expires_ns, size, body) VALUES (?, ?, ?, ?)",
			key, now.Add(ttl).UnixNano(), len(value), value); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM cache WHERE id IN (
	SELECT id FROM (SELECT id, SUM(size) OVER (ORDER BY id DESC) AS total FROM cache) AS t WHERE total > ?)`, c.o.MaxBytes)
		return err
	})
	if err != nil {
		return fmt.Errorf("caching %s: %w", key, err)
	}
	return nil
}

// Get returns the value kept under key, and false when there is none or it
// expired.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var body []byte
	err := c.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, "SELECT body FROM cache WHERE cache_key = ? AND expires_ns > ?", key, c.s.now().UnixNano()).Scan(&body)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading the cache entry %s: %w", key, err)
	}
	return body, true, nil
}
