package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/tool"
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
	// AgentID is the configured agent the session belongs to; "" for none.
	AgentID string `json:"agentId"`
	// ParentKey is the session that spawned this one (a sub-agent's).
	ParentKey string `json:"parentKey"`
	// Status is one of the Session… statuses.
	Status string `json:"status"`
	// Label names a sub-agent's task for people.
	Label string `json:"label"`
	// Usage is the tokens the session's runs used, summed.
	Usage SessionUsage `json:"usage"`
	// Identity is who the session runs as, recorded when it was created;
	// nil for a session kept before identities were recorded.
	Identity *tool.Identity `json:"identity,omitempty"`
}

// SessionUsage counts tokens.
type SessionUsage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// The statuses of a session: idle (no run), running, and how its last run
// ended.
const (
	SessionIdle    = "idle"
	SessionRunning = "running"
	SessionDone    = "done"
	SessionFailed  = "failed"
	SessionAborted = "aborted"
)

// SessionKey is the key of an agent's session on a channel with a peer:
// agent:<id>:<channel>:<peer>; with no channel, the agent's main session,
// agent:<id>:main.
func SessionKey(agentID, channel, peer string) string {
	if channel == "" {
		return "agent:" + agentID + ":main"
	}
	return "agent:" + agentID + ":" + channel + ":" + peer
}

// SessionStart says who a run of a session is for.
type SessionStart struct {
	ID, Workspace, Model, ParentKey, Label string
	// As is who the session runs as (its agent is the session's).
	As tool.Identity
}

// Start marks session s.ID running, creating it when it does not exist (with
// its identity, agent, parent and label) or updating its model. The
// identity of a session that has one is never changed; one kept before
// identities were recorded gets s.As (and its agent, if it had none).
func (ss *Sessions) Start(ctx context.Context, s SessionStart) error {
	if s.ID == "" {
		return errors.New("a session needs a key")
	}
	id, err := json.Marshal(s.As)
	if err != nil {
		return fmt.Errorf("starting session %s: %w", s.ID, err)
	}
	now := ss.s.now().UnixNano()
	err = ss.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, `UPDATE sessions SET model = ?, status = ?, updated_ns = ?,
agent_id = CASE WHEN identity = '' AND agent_id = '' THEN ? ELSE agent_id END,
identity = CASE WHEN identity = '' THEN ? ELSE identity END WHERE id = ?`, s.Model, SessionRunning, now, s.As.AgentID, string(id), s.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO sessions (id, workspace, model, created_ns, updated_ns, agent_id, parent_key, status, label, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			s.ID, s.Workspace, s.Model, now, now, s.As.AgentID, s.ParentKey, SessionRunning, s.Label, string(id))
		return err
	})
	if err != nil {
		return fmt.Errorf("starting session %s: %w", s.ID, err)
	}
	return nil
}

// Finish sets a session's status after a run and adds the run's usage.
func (ss *Sessions) Finish(ctx context.Context, id, status string, usage SessionUsage) error {
	switch status {
	case SessionIdle, SessionDone, SessionFailed, SessionAborted:
	default:
		return fmt.Errorf("session %s: %q is not a status a run ends in (idle, done, failed, aborted)", id, status)
	}
	now := ss.s.now().UnixNano()
	var n int64
	err := ss.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, "UPDATE sessions SET status = ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, updated_ns = ? WHERE id = ?",
			status, usage.Input, usage.Output, now, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("finishing session %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("session %s: %w", id, ErrNoSession)
	}
	return nil
}

// SessionFilter narrows List; zero fields do not filter.
type SessionFilter struct {
	AgentID   string
	ParentKey string
	// Status keeps sessions in that status.
	Status string
	// Since keeps sessions updated at or after it.
	Since time.Time
	// Limit bounds the sessions returned (default 100).
	Limit int
}

const sessionColumns = "id, workspace, model, created_ns, updated_ns, agent_id, parent_key, status, label, input_tokens, output_tokens, identity, (SELECT COUNT(*) FROM session_messages m WHERE m.session_id = sessions.id)"

// scanSession reads a session's row. An identity that cannot be read is an
// error: who the session runs as is not guessed.
func scanSession(row scanner) (SessionInfo, error) {
	var info SessionInfo
	var c, u int64
	var id string
	if err := row.Scan(&info.ID, &info.Workspace, &info.Model, &c, &u, &info.AgentID, &info.ParentKey, &info.Status, &info.Label, &info.Usage.Input, &info.Usage.Output, &id, &info.Messages); err != nil {
		return info, err
	}
	info.Created, info.Updated = time.Unix(0, c), time.Unix(0, u)
	if id != "" {
		info.Identity = new(tool.Identity)
		if err := json.Unmarshal([]byte(id), info.Identity); err != nil {
			return info, fmt.Errorf("session %s: who it runs as cannot be read (%v), so it is not run", info.ID, err)
		}
	}
	return info, nil
}

// List returns the sessions that match f, the most recently updated first.
func (ss *Sessions) List(ctx context.Context, f SessionFilter) ([]SessionInfo, error) {
	q := "SELECT " + sessionColumns + " FROM sessions WHERE updated_ns >= ?"
	args := []any{f.Since.UnixNano()}
	if f.Since.IsZero() {
		args[0] = int64(0)
	}
	if f.AgentID != "" {
		q += " AND agent_id = ?"
		args = append(args, f.AgentID)
	}
	if f.ParentKey != "" {
		q += " AND parent_key = ?"
		args = append(args, f.ParentKey)
	}
	if f.Status != "" {
		q += " AND status = ?"
		args = append(args, f.Status)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q += " ORDER BY updated_ns DESC, id LIMIT ?"
	args = append(args, limit)
	out, err := readAll(ctx, ss.s, scanSession, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	return out, nil
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

// ErrSessionRunning is returned by Delete for a session a run is using.
var ErrSessionRunning = errors.New("the session is running")

// Delete removes session id and its transcript, and returns what it was.
// A running session is not deleted (ErrSessionRunning), nor one the store
// does not hold (ErrNoSession). The sessions it spawned stay.
func (ss *Sessions) Delete(ctx context.Context, id string) (SessionInfo, error) {
	var info SessionInfo
	err := ss.s.Write(ctx, func(tx *Tx) error {
		var err error
		if info, err = scanSession(tx.QueryRow(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = ?", id)); err != nil {
			return err
		}
		if info.Status == SessionRunning {
			return ErrSessionRunning
		}
		if _, err := tx.Exec(ctx, "DELETE FROM session_messages WHERE session_id = ?", id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM sessions WHERE id = ?", id)
		return err
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return SessionInfo{}, fmt.Errorf("session %s: %w", id, ErrNoSession)
	case err != nil:
		return info, fmt.Errorf("deleting session %s: %w", id, err)
	}
	return info, nil
}

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
	var info SessionInfo
	err := ss.s.Read(ctx, func(tx *Tx) error {
		var err error
		info, err = scanSession(tx.QueryRow(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = ?", id))
		return err
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
	out, err := readAll(ctx, ss.s, func(row scanner) (SessionMessage, error) {
		var m SessionMessage
		var ns int64
		var body string
		err := row.Scan(&m.Seq, &ns, &m.Role, &m.Model, &body)
		m.Time, m.Body = time.Unix(0, ns), json.RawMessage(body)
		return m, err
	}, "SELECT seq, time_ns, role, model, body FROM session_messages WHERE session_id = ? ORDER BY seq", id)
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	return out, nil
}

// Truncate keeps the first keep messages of session id and deletes the
// rest (a rewind of its conversation), and returns how many it deleted. A
// running session is not changed (ErrSessionRunning), nor one the store
// does not hold (ErrNoSession); keep must not be negative.
func (ss *Sessions) Truncate(ctx context.Context, id string, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("rewinding session %s: %d messages cannot be kept", id, keep)
	}
	var n int64
	err := ss.s.Write(ctx, func(tx *Tx) error {
		info, err := scanSession(tx.QueryRow(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = ?", id))
		if err != nil {
			return err
		}
		if info.Status == SessionRunning {
			return ErrSessionRunning
		}
		res, err := tx.Exec(ctx, `DELETE FROM session_messages WHERE session_id = ? AND seq NOT IN
(SELECT seq FROM session_messages WHERE session_id = ? ORDER BY seq LIMIT ?)`, id, id, keep)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE sessions SET updated_ns = ? WHERE id = ?", ss.s.now().UnixNano(), id)
		return err
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("session %s: %w", id, ErrNoSession)
	case errors.Is(err, ErrSessionRunning):
		return 0, fmt.Errorf("session %s: %w", id, err)
	case err != nil:
		return 0, fmt.Errorf("rewinding session %s: %w", id, err)
	}
	return int(n), nil
}
