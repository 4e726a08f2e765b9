package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Sessions keeps agents' transcripts: each session's messages in order,
// with when they were written and the model of the run that wrote them, so
// a run can resume a session and tools can read it.
type Sessions struct{ s *Store }

// Sessions returns the store's sessions.
func (s *Store) Sessions() *Sessions { return &Sessions{s: s} }

// SessionInfo describes a session.
type SessionInfo struct {
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Model     string    `json:"model"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	Messages  int       `json:"messages"`
}

// SessionMessage is one message of a session's transcript.
type SessionMessage struct {
	Seq   int64           `json:"seq"`
	Time  time.Time       `json:"time"`
	Role  string          `json:"role"`
	Model string          `json:"model"`
	Body  json.RawMessage `json:"body"`
}

// ErrNoSession is returned for a session id the store does not hold.
var ErrNoSession = errors.New("no such session")

// Append adds messages (their Role and Body; Time defaults to now) to the
// session id, creating it for workspace when it does not exist; model is
// the model of the run that wrote them.
func (ss *Sessions) Append(ctx context.Context, id, workspace, model string, msgs []SessionMessage) error {
	if id == "" {
		return errors.New("a session needs an id")
	}
	now := ss.s.now().UnixNano()
	err := ss.s.Write(ctx, func(tx *Tx) error {
		var seq sql.NullInt64
		var exists int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM sessions WHERE id = ?", id).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			if _, err := tx.Exec(ctx, "INSERT INTO sessions (id, workspace, model, created_ns, updated_ns) VALUES (?, ?, ?, ?, ?)", id, workspace, model, now, now); err != nil {
				return err
			}
		} else if _, err := tx.Exec(ctx, "UPDATE sessions SET model = ?, updated_ns = ? WHERE id = ?", model, now, id); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT MAX(seq) FROM session_messages WHERE session_id = ?", id).Scan(&seq); err != nil {
			return err
		}
		next := seq.Int64 + 1
		for _, m := range msgs {
			if !json.Valid(m.Body) {
				return fmt.Errorf("message %d of session %s is not valid JSON", next, id)
			}
			t := now
			if !m.Time.IsZero() {
				t = m.Time.UnixNano()
			}
			if _, err := tx.Exec(ctx, "INSERT INTO session_messages (session_id, seq, time_ns, role, model, body) VALUES (?, ?, ?, ?, ?, ?)",
				id, next, t, m.Role, model, string(m.Body)); err != nil {
				return err
			}
			next++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("saving session %s: %w", id, err)
	}
	return nil
}

// Info returns a session's description, or ErrNoSession.
func (ss *Sessions) Info(ctx context.Context, id string) (SessionInfo, error) {
	info := SessionInfo{ID: id}
	err := ss.s.Read(ctx, func(tx *Tx) error {
		var c, u int64
		if err := tx.QueryRow(ctx, "SELECT workspace, model, created_ns, updated_ns FROM sessions WHERE id = ?", id).Scan(&info.Workspace, &info.Model, &c, &u); err != nil {
			return err
		}
		info.Created, info.Updated = time.Unix(0, c), time.Unix(0, u)
		return tx.QueryRow(ctx, "SELECT COUNT(*) FROM session_messages WHERE session_id = ?", id).Scan(&info.Messages)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return SessionInfo{}, fmt.Errorf("session %s: %w", id, ErrNoSession)
	}
	if err != nil {
		return SessionInfo{}, fmt.Errorf("reading session %s: %w", id, err)
	}
	return info, nil
}

// Messages returns a session's messages in order; none for a session the
// store does not hold.
func (ss *Sessions) Messages(ctx context.Context, id string) ([]SessionMessage, error) {
	var out []SessionMessage
	err := ss.s.Read(ctx, func(tx *Tx) error {
		rows, err := tx.Query(ctx, "SELECT seq, time_ns, role, model, body FROM session_messages WHERE session_id = ? ORDER BY seq", id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m SessionMessage
			var ns int64
			var body string
			if err := rows.Scan(&m.Seq, &ns, &m.Role, &m.Model, &body); err != nil {
				return err
			}
			m.Time, m.Body = time.Unix(0, ns), json.RawMessage(body)
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	return out, nil
}
