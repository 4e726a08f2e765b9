package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolbelt/toolbelt/tool"
)

var _ tool.StepJournal = (*Journal)(nil)

// RecordStep keeps the undo step of the call (tool.StepJournal), labelled
// with the scope ctx carries (its workspace and session), and lets go of
// steps past their age.
func (j *Journal) RecordStep(ctx context.Context, callID string, s tool.UndoStep) error {
	if callID == "" || s.Tool == "" {
		return fmt.Errorf("keeping an undo step: the call id (%q) and tool (%q) must not be empty", callID, s.Tool)
	}
	now := j.s.now()
	scope, _ := tool.ScopeFrom(ctx)
	err := j.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO undo_steps (call_id, workspace, session_key, tool, data, created_ns) VALUES (?, ?, ?, ?, ?, ?)",
			callID, scope.Workspace, scope.Session, s.Tool, string(s.Data), now.UnixNano()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM undo_steps WHERE created_ns < ?", now.Add(-j.o.MaxAge).UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping the undo step of call %s: %w", callID, err)
	}
	return nil
}

// Step returns the undo step kept for the call (in the journal's
// workspace, when limited by In); ok is false when none is kept: its tool
// has none, it was undone already, or its record expired.
func (j *Journal) Step(ctx context.Context, callID string) (s tool.UndoStep, ok bool, err error) {
	cond, args := j.where([]any{callID, j.s.now().Add(-j.o.MaxAge).UnixNano()})
	steps, err := readAll(ctx, j.s, func(row scanner) (s tool.UndoStep, err error) {
		var data string
		err = row.Scan(&s.Tool, &data)
		s.Data = []byte(data)
		return s, err
	}, "SELECT tool, data FROM undo_steps WHERE call_id = ? AND created_ns >= ?"+cond+" ORDER BY id", args...)
	if err != nil {
		return tool.UndoStep{}, false, fmt.Errorf("reading the undo step of call %s: %w", callID, err)
	}
	if len(steps) == 0 {
		return tool.UndoStep{}, false, nil
	}
	return steps[0], true, nil
}

// DeleteStep forgets the call's undo step (once it has run).
func (j *Journal) DeleteStep(ctx context.Context, callID string) error {
	if callID == "" {
		return errors.New("deleting an undo step: the call id is empty")
	}
	cond, args := j.where([]any{callID})
	err := j.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM undo_steps WHERE call_id = ?"+cond, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting the undo step of call %s: %w", callID, err)
	}
	return nil
}
