package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// JournalOptions bound what a Journal keeps; the zero value keeps the
// defaults.
type JournalOptions struct {
	// MaxAge is how long changes are kept for undo. Default 30 days.
	MaxAge time.Duration
}

// Journal records the file changes calls make, in order, so that they can be
// undone (a tool.Journal).
type Journal struct {
	s *Store
	o JournalOptions
}

var _ tool.Journal = (*Journal)(nil)

// Journal returns the store's journal of file changes, bounded by o.
func (s *Store) Journal(o JournalOptions) *Journal {
	if o.MaxAge <= 0 {
		o.MaxAge = 30 * 24 * time.Hour
	}
	return &Journal{s: s, o: o}
}

// Record keeps one change the call made, after the changes it made before,
// and lets go of changes past their age.
func (j *Journal) Record(ctx context.Context, callID string, c tool.FileChange) error {
	if callID == "" || c.Path == "" {
		return fmt.Errorf("recording a file change: the call id (%q) and path (%q) must not be empty", callID, c.Path)
	}
	now := j.s.now()
	err := j.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO file_changes
	(call_id, created_ns, path, existed, before, mode, exists_after, after_sha256, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			callID, now.UnixNano(), c.Path, c.Existed, c.Before, int64(c.Mode), c.Exists, c.AfterSHA256, c.After); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM file_changes WHERE created_ns < ?", now.Add(-j.o.MaxAge).UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("recording a change of %s by call %s: %w", c.Path, callID, err)
	}
	return nil
}

// Changes returns the changes the call made, in the order it made them;
// none when there are none or they are past their age.
func (j *Journal) Changes(ctx context.Context, callID string) ([]tool.FileChange, error) {
	var out []tool.FileChange
	err := j.s.Read(ctx, func(tx *Tx) error {
		rows, err := tx.Query(ctx, `SELECT path, existed, before, mode, exists_after, after_sha256, after
	FROM file_changes WHERE call_id = ? AND created_ns >= ? ORDER BY id`,
			callID, j.s.now().Add(-j.o.MaxAge).UnixNano())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c    tool.FileChange
				mode int64
			)
			if err := rows.Scan(&c.Path, &c.Existed, &c.Before, &mode, &c.Exists, &c.AfterSHA256, &c.After); err != nil {
				return err
			}
			c.Mode = fs.FileMode(mode)
			if len(c.Before) == 0 {
				c.Before = nil
			}
			if len(c.After) == 0 {
				c.After = nil
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading the changes of call %s: %w", callID, err)
	}
	return out, nil
}

// DeleteChanges forgets the changes the call made (after they are undone).
func (j *Journal) DeleteChanges(ctx context.Context, callID string) error {
	if callID == "" {
		return errors.New("deleting file changes: the call id is empty")
	}
	err := j.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM file_changes WHERE call_id = ?", callID)
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting the changes of call %s: %w", callID, err)
	}
	return nil
}
