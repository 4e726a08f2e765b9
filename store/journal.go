package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// JournalOptions bound what a Journal keeps; the zero value keeps the
// defaults.
type JournalOptions struct {
	// MaxAge is how long changes are kept for undo. Default 30 days.
	MaxAge time.Duration
	// AwaitAnswers keeps each call's intent (see Intend) after its changes
	// are made until Answered says the call's answer is recorded, so that
	// a call whose process ends in between is recorded by Recover. Whoever
	// sets it must call Answered for every call once its audit record is
	// written (or fails to be): the composition root does.
	AwaitAnswers bool
}

// Journal records the file changes calls make, in order, so that they can be
// undone (a tool.Journal).
type Journal struct {
	s *Store
	o JournalOptions
	// workspace, when in is set, limits Changes and DeleteChanges to the
	// changes made in it (see In).
	workspace string
	in        bool
	// open are the intents this journal keeps for calls under way; copies
	// made by In share them.
	open *openIntents
}

var _ tool.IntentJournal = (*Journal)(nil)

// Journal returns the store's journal of file changes, bounded by o.
func (s *Store) Journal(o JournalOptions) *Journal {
	if o.MaxAge <= 0 {
		o.MaxAge = 30 * 24 * time.Hour
	}
	return &Journal{s: s, o: o, open: &openIntents{calls: map[string]*openIntent{}}}
}

// In returns the journal limited to the changes made in workspace (as
// recorded: absolute, links resolved): Changes and DeleteChanges see no
// other. Record is unaffected.
func (j *Journal) In(workspace string) *Journal {
	k := *j
	k.workspace, k.in = workspace, true
	return &k
}

// Record keeps one change the call made, after the changes it made before,
// and lets go of changes past their age. The change is labelled with the
// scope ctx carries (tool.WithScope): its workspace and session.
func (j *Journal) Record(ctx context.Context, callID string, c tool.FileChange) error {
	if callID == "" || c.Path == "" {
		return fmt.Errorf("recording a file change: the call id (%q) and path (%q) must not be empty", callID, c.Path)
	}
	now := j.s.now()
	scope, _ := tool.ScopeFrom(ctx)
	err := j.s.Write(ctx, func(tx *Tx) error {
		if err := insertChange(ctx, tx, callID, now.UnixNano(), c, scope, nil); err != nil {
			return err
		}
		return expire(ctx, tx, now.Add(-j.o.MaxAge))
	})
	if err != nil {
		return fmt.Errorf("recording a change of %s by call %s: %w", c.Path, callID, err)
	}
	return nil
}

// Workspaces returns the workspaces the call changed files in, or kept
// an undo step for, as recorded (absolute, links resolved; "" for changes
// recorded before workspaces were), sorted; none when nothing of the call
// is kept.
func (j *Journal) Workspaces(ctx context.Context, callID string) ([]string, error) {
	since := j.s.now().Add(-j.o.MaxAge).UnixNano()
	out, err := readAll(ctx, j.s, func(row scanner) (ws string, err error) {
		err = row.Scan(&ws)
		return ws, err
	}, "SELECT workspace FROM file_changes WHERE call_id = ? AND created_ns >= ? AND "+made+
		" UNION SELECT workspace FROM undo_steps WHERE call_id = ? AND created_ns >= ? ORDER BY workspace",
		callID, since, callID, since)
	if err != nil {
		return nil, fmt.Errorf("reading the workspaces of call %s: %w", callID, err)
	}
	return out, nil
}

// where is the condition on the workspace of a journal limited by In.
func (j *Journal) where(args []any) (string, []any) {
	if !j.in {
		return "", args
	}
	return " AND workspace = ?", append(args, j.workspace)
}

// Changes returns the changes the call made, in the order it made them;
// none when there are none or they are past their age. Changes of an
// intent that is not closed are not the call's yet.
func (j *Journal) Changes(ctx context.Context, callID string) ([]tool.FileChange, error) {
	cond, args := j.where([]any{callID, j.s.now().Add(-j.o.MaxAge).UnixNano()})
	out, err := readAll(ctx, j.s, scanChange, `SELECT path, existed, before, mode, exists_after, after_sha256, after
	FROM file_changes WHERE call_id = ? AND created_ns >= ? AND `+made+cond+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the changes of call %s: %w", callID, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// DeleteChanges forgets the changes the call made (after they are undone).
func (j *Journal) DeleteChanges(ctx context.Context, callID string) error {
	if callID == "" {
		return errors.New("deleting file changes: the call id is empty")
	}
	cond, args := j.where([]any{callID})
	err := j.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM file_changes WHERE call_id = ? AND "+made+cond, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting the changes of call %s: %w", callID, err)
	}
	return nil
}
