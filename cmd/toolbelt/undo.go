package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/undo"
)

type undoCmd struct {
	CallID string `arg:"" name:"call-id" help:"The id of the call whose file changes to take back (see toolbelt audit)."`
	workspaceFlags
	JSON bool `name:"json" help:"Print what was undone as JSON."`
}

func (c *undoCmd) Run(e *env) error {
	tc, err := c.runContext(e)
	if err != nil {
		return err
	}
	st, err := e.state(tc.WorkspaceDir)
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	journal := st.Journal(store.JournalOptions{MaxAge: cfg.Retention.Undo.D()})
	report, err := undo.Undo(context.Background(), journal, tc.FS, c.CallID)
	var conflict *undo.ConflictError
	switch {
	case errors.As(err, &conflict):
		fmt.Fprintln(e.stderr, err)
		return exitCode(exitToolError)
	case errors.Is(err, undo.ErrNothingToUndo):
		fmt.Fprintf(e.stderr, "toolbelt: %v\n", err)
		return exitCode(exitToolError)
	case err != nil:
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, report)
	}
	_, err = fmt.Fprintln(e.stdout, report)
	return err
}
