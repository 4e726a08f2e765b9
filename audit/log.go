package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

// Log is the audit log in a store. It is safe for concurrent use, and
// several processes may append to one PostgreSQL or SQLite database.
type Log struct {
	st *store.Store
}

// New returns the audit log of st.
func New(st *store.Store) *Log { return &Log{st: st} }

// encodingVersion is written into every record so that a later encoding can
// be told from this one.
const encodingVersion = 1

// body is what is stored and hashed for a record: the record in canonical
// JSON (fixed field order, arguments with sorted keys, times in UTC) with
// the encoding's version and the hash of the record before ("" for the
// first). Its Hash is empty.
type body struct {
	V    int    `json:"v"`
	Prev string `json:"prev"`
	Record
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Append adds r to the end of the log: it redacts the arguments, fills Time
// when it is zero, and chains the record to the one before. Appends are
// serialized by the update of the chain's head, so concurrent appends, from
// any number of processes, never fork the chain.
func (l *Log) Append(ctx context.Context, r Record) error {
	r.Seq, r.Hash = 0, ""
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	if r.Confirmation != nil {
		c := *r.Confirmation
		c.At = c.At.UTC()
		r.Confirmation = &c
	}
	r.Arguments = Redact(r.Arguments)
	err := l.st.Write(ctx, func(tx *store.Tx) error {
		var prev string
		if err := tx.QueryRow(ctx, "UPDATE audit_head SET seq = seq + 1 WHERE id = 1 RETURNING seq, hash").Scan(&r.Seq, &prev); err != nil {
			return err
		}
		b, err := json.Marshal(body{V: encodingVersion, Prev: prev, Record: r})
		if err != nil {
			return err
		}
		hash := hashOf(b)
		if _, err := tx.Exec(ctx, "INSERT INTO audit_log (seq, time_ns, call_id, tool, session_key, body, hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
			r.Seq, r.Time.UnixNano(), r.CallID, r.Tool, r.SessionKey, string(b), hash); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE audit_head SET hash = ? WHERE id = 1", hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("appending the audit record of call %s: %w", r.CallID, err)
	}
	return nil
}

// Filter selects records; its zero value selects all.
type Filter struct {
	// Tool keeps the records of this tool.
	Tool string
	// Since keeps the records made at or after it.
	Since time.Time
	// Session keeps the records of this session key.
	Session string
	// Limit keeps only the newest Limit records (0: all).
	Limit int
}

// List returns the records f selects, oldest first. It reads records as
// stored, without checking the chain (Verify does).
func (l *Log) List(ctx context.Context, f Filter) ([]Record, error) {
	var (
		where []string
		args  []any
	)
	if f.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, f.Tool)
	}
	if f.Session != "" {
		where, args = append(where, "session_key = ?"), append(args, f.Session)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time_ns >= ?"), append(args, f.Since.UnixNano())
	}
	q := "SELECT seq, body, hash FROM audit_log"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY seq DESC"
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	var out []Record
	err := l.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				seq int64
				raw []byte
				b   body
			)
			if err := rows.Scan(&seq, &raw, &b.Hash); err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &b); err != nil {
				return fmt.Errorf("record %d cannot be read: %w", seq, err)
			}
			out = append(out, b.Record)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing audit records: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}
