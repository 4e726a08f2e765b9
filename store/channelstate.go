package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ChannelState keeps what channels remember beyond a process, by channel
// and key until it expires: the deliveries they took (Claim) and values
// such as an email thread's headers (Get, Put). Every process on the store
// sees the same rows, so gateways sharing a PostgreSQL store share them.
type ChannelState struct{ s *Store }

// ChannelState returns the store's channel state.
func (s *Store) ChannelState() *ChannelState { return &ChannelState{s: s} }

// maxStateKey is the longest key kept as it is; a longer one (a webhook-id
// is the sender's to choose) is kept as its SHA-256, within what an index
// entry may hold.
const maxStateKey = 256

func stateKey(key string) string {
	if len(key) <= maxStateKey {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Claim records key of channel as taken for ttl and says whether this is
// the first claim of it within that time: of all the processes claiming
// one key at once, exactly one is told true (the row's primary key
// decides). Rows past their time are let go of.
func (c *ChannelState) Claim(ctx context.Context, channel, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, errors.New("claiming a delivery: the time to remember it must be positive")
	}
	now := c.s.now()
	var first bool
	err := c.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM channel_state WHERE expires_ns < ?", now.UnixNano()); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, "INSERT INTO channel_state (channel, state_key, value, expires_ns) VALUES (?, ?, ?, ?) ON CONFLICT (channel, state_key) DO NOTHING",
			channel, stateKey(key), []byte{}, now.Add(ttl).UnixNano())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		first = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claiming %s of channel %s: %w", key, channel, err)
	}
	return first, nil
}

// Put keeps value under key of channel for ttl, replacing what was kept
// there.
func (c *ChannelState) Put(ctx context.Context, channel, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("keeping channel state: the time to keep it must be positive")
	}
	now := c.s.now()
	err := c.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM channel_state WHERE expires_ns < ?", now.UnixNano()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO channel_state (channel, state_key, value, expires_ns) VALUES (?, ?, ?, ?)
ON CONFLICT (channel, state_key) DO UPDATE SET value = excluded.value, expires_ns = excluded.expires_ns`,
			channel, stateKey(key), value, now.Add(ttl).UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping %s of channel %s: %w", key, channel, err)
	}
	return nil
}

// Get returns the value kept under key of channel, and false when there is
// none or it expired.
func (c *ChannelState) Get(ctx context.Context, channel, key string) ([]byte, bool, error) {
	var value []byte
	err := c.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, "SELECT value FROM channel_state WHERE channel = ? AND state_key = ? AND expires_ns >= ?",
			channel, stateKey(key), c.s.now().UnixNano()).Scan(&value)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s of channel %s: %w", key, channel, err)
	}
	return value, true, nil
}
