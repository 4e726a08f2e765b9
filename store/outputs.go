package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// OutputOptions bound what Outputs keeps; the zero value keeps the defaults.
type OutputOptions struct {
	// MaxBytes is the total size of the outputs kept: past it, the oldest
	// go first. Default 256 MiB.
	MaxBytes int64
	// MaxAge is how long an output is kept. Default 7 days.
	MaxAge time.Duration
}

// Outputs keeps the full outputs of results the pipeline cut short, by call
// id (a tool.Outputs).
type Outputs struct {
	s *Store
	o OutputOptions
}

var _ tool.Outputs = (*Outputs)(nil)

// Outputs returns the store's output store, bounded by o.
func (s *Store) Outputs(o OutputOptions) *Outputs {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 256 << 20
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 7 * 24 * time.Hour
	}
	return &Outputs{s: s, o: o}
}

// Put keeps text as the full output of the call, replacing what was kept
// for it, and lets go of outputs past the bounds. The output is labelled
// with the scope ctx carries (tool.WithScope): only that scope gets it
// back; and with the origin ctx carries (tool.WithOrigin), which Get
// returns with it.
func (o *Outputs) Put(ctx context.Context, callID, text string) error {
	if callID == "" {
		return errors.New("keeping an output: the call id is empty")
	}
	if int64(len(text)) > o.o.MaxBytes {
		return fmt.Errorf("keeping the output of call %s: %d bytes is more than the store keeps (%d bytes)", callID, len(text), o.o.MaxBytes)
	}
	now := o.s.now()
	scope, _ := tool.ScopeFrom(ctx)
	origin := tool.OriginFrom(ctx)
	err := o.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM outputs WHERE call_id = ?", callID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO outputs (call_id, created_ns, size, body, workspace, session_key, external, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			callID, now.UnixNano(), len(text), []byte(text), scope.Workspace, scope.Session, origin.IsExternal(), sourceOf(origin)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM outputs WHERE created_ns < ?", now.Add(-o.o.MaxAge).UnixNano()); err != nil {
			return err
		}
		// Newest first, the running total of sizes: rows past the bound go.
		_, err := tx.Exec(ctx, `DELETE FROM outputs WHERE id IN (
	SELECT id FROM (SELECT id, SUM(size) OVER (ORDER BY id DESC) AS total FROM outputs) AS t WHERE total > ?)`, o.o.MaxBytes)
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping the output of call %s: %w", callID, err)
	}
	return nil
}

// Get returns the full output of the call with its origin, and false when
// none is kept for the scope ctx carries (tool.WithScope): an output kept in
// a session is handed only to that session; one kept without a session only
// to calls without a session in the same workspace. A ctx without a scope
// gets only outputs kept without one.
func (o *Outputs) Get(ctx context.Context, callID string) (tool.Output, bool, error) {
	var (
		body     []byte
		external bool
		source   string
	)
	scope, _ := tool.ScopeFrom(ctx)
	q, args := "SELECT body, external, source FROM outputs WHERE call_id = ? AND created_ns >= ? AND session_key = ?", []any{callID, o.s.now().Add(-o.o.MaxAge).UnixNano(), scope.Session}
	if scope.Session == "" {
		q, args = q+" AND workspace = ?", append(args, scope.Workspace)
	}
	err := o.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, q, args...).Scan(&body, &external, &source)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return tool.Output{}, false, nil
	case err != nil:
		return tool.Output{}, false, fmt.Errorf("reading the output of call %s: %w", callID, err)
	}
	out := tool.Output{Text: string(body)}
	if external {
		out.Origin = tool.FromOutside(source)
	}
	return out, true, nil
}

// sourceOf is the source an origin names, or "".
func sourceOf(o *tool.Origin) string {
	if o == nil {
		return ""
	}
	return o.Source
}
