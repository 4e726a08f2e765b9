package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

type undoCmd struct {
	CallID    string `arg:"" name:"call-id" help:"The id of the call to take back (see toolbelt audit): its file changes, or what its tool's undo step takes back."`
	Workspace string `help:"The workspace the call worked in. Not needed: undo works in the workspace recorded with the call, and refuses when this one is another." placeholder:"DIR"`
	JSON      bool   `name:"json" help:"Print what was undone as JSON."`
	Yes       bool   `help:"Approve the undo step of a tool when it needs a person's approval (recorded as such in the audit log)."`
}

// Run undoes the call in the workspace recorded with its changes, wherever
// the command runs from, and records the undo in the audit log.
func (c *undoCmd) Run(e *env) error {
	started := time.Now()
	ctx := context.Background()
	// Undo runs no tools: the root's workspace is the call's own.
	tb, err := e.root(stateRoot, "")
	if err != nil {
		return err
	}
	ws, err := c.workspace(ctx, e, tb.Journal())
	var refused *refusal
	switch {
	case errors.As(err, &refused):
		printError(e.stderr, err)
		return c.audit(ctx, e, started, refused.workspace, 0, cmp.Or(refused.class, "refused"))
	case err != nil:
		return err
	}
	if _, ok, err := tb.Journal().In(ws).Step(ctx, c.CallID); err != nil {
		return err
	} else if ok {
		return c.runStep(ctx, e, ws)
	}
	report, err := tb.Undo(ctx, ws, c.CallID)
	var conflict *undo.ConflictError
	var ddir *toolbelt.DataDirError
	switch {
	case errors.As(err, &ddir):
		return fmt.Errorf("%w: keep state elsewhere (--data DIR or %s), or work in another directory", ddir, envData)
	case errors.As(err, &conflict):
		fmt.Fprintln(e.stderr, termsafe.Text(err.Error()))
		return c.audit(ctx, e, started, ws, 0, "conflict")
	case errors.Is(err, undo.ErrNothingToUndo):
		printError(e.stderr, err)
		return c.audit(ctx, e, started, ws, 0, "nothing-to-undo")
	case err != nil:
		if aerr := c.audit(ctx, e, started, ws, 0, "tool"); !isExit(aerr) {
			e.log.Error("recording the undo in the audit log", "err", aerr)
		}
		return err
	}
	var out []byte
	if c.JSON {
		out, _ = json.MarshalIndent(report, "", "  ")
		out = append(termsafe.JSON(out), '\n')
	} else {
		// The paths are the workspace's: escapes in file names are shown.
		out = []byte(termsafe.Text(report.String()) + "\n")
	}
	// The record is written before the result is shown; when it cannot be,
	// the result is still shown (the files are back) and the error said.
	aerr := c.audit(ctx, e, started, ws, len(out), "")
	if _, err := e.stdout.Write(out); err != nil {
		return err
	}
	return aerr
}

// runStep runs the undo step kept with the call through the pipeline of
// the call's workspace, as toolbelt call runs a call: its policy decides,
// the person at the terminal (or the console, or --yes) approves when it
// asks, and its audit record names the call undone.
func (c *undoCmd) runStep(ctx context.Context, e *env, ws string) error {
	// The state root found the step; running it needs the tools.
	e.closeRoot()
	e.tb = nil
	tc, err := workspaceFlags{Workspace: ws}.runContext(e)
	if err != nil {
		return err
	}
	runner, closer, err := e.runner(tc, runFlags{Yes: c.Yes}, invoke.Config{})
	if err != nil {
		return err
	}
	defer closer.Close()
	msg, err := e.tb.UndoStep(ctx, runner, ws, c.CallID)
	if err != nil {
		return err
	}
	if c.JSON {
		err = writeJSON(e.stdout, msg)
	} else {
		err = printContent(e, msg)
	}
	if err == nil && msg.IsError {
		err = exitCode(exitToolError)
	}
	return err
}

// nothingKept is the refusal of a call with nothing kept to undo, naming
// its tool when the audit log knows it.
func nothingKept(ctx context.Context, e *env, given, callID string) *refusal {
	what := "call " + callID
	if recs, err := e.tb.AuditLog().List(ctx, auditlog.Filter{CallID: callID, Limit: 1}); err == nil && len(recs) > 0 {
		what += " (" + recs[0].Tool + ")"
	}
	return &refusal{given, fmt.Sprintf("%v for %s: no file change or undo step is kept for it. It changed no files and its tool has no undo step, or it was undone already, or its record expired", undo.ErrNothingToUndo, what), "nothing-to-undo"}
}

// refusal is an undo refused before anything was read: the call is not
// known in the workspace asked for, or in none.
type refusal struct {
	workspace string
	msg       string
	// class is the audit's error class: "refused", or "nothing-to-undo"
	// when no change is recorded for the call anywhere.
	class string
}

func (r *refusal) Error() string { return r.msg }

// workspace returns the workspace to undo the call in: the one recorded
// with its changes. A workspace given with --workspace (or
// TOOLBELT_WORKSPACE) must be that one; it only chooses when one id was
// used in several workspaces (ids a caller chose itself), or for changes
// recorded before workspaces were.
func (c *undoCmd) workspace(ctx context.Context, e *env, j *store.Journal) (string, error) {
	given := cmp.Or(c.Workspace, os.Getenv("TOOLBELT_WORKSPACE"))
	if given != "" {
		given = tool.ResolveDir(given)
	}
	wss, err := j.Workspaces(ctx, c.CallID)
	if err != nil {
		return "", err
	}
	switch {
	case len(wss) == 0:
		return "", nothingKept(ctx, e, given, c.CallID)
	case given != "" && slices.Contains(wss, given):
		return given, nil
	case len(wss) == 1 && wss[0] == "":
		// Recorded before workspaces were: the workspace given, or here.
		return tool.ResolveDir(cmp.Or(given, ".")), nil
	case given != "":
		return "", &refusal{given, fmt.Sprintf("call %s changed files in %s, not in %s: nothing was undone. Run toolbelt undo %s without --workspace to undo it where it ran", c.CallID, strings.Join(wss, " and "), given, c.CallID), ""}
	case len(wss) == 1:
		return wss[0], nil
	}
	return "", &refusal{"", fmt.Sprintf("call id %s was used in %d workspaces (%s): choose one with --workspace", c.CallID, len(wss), strings.Join(wss, ", ")), ""}
}

// audit records the undo in the audit log, and waits until it is written.
// outcome is "" when the undo succeeded; otherwise the command ends with
// exit code 1 after the record is written.
func (c *undoCmd) audit(ctx context.Context, e *env, started time.Time, ws string, resultBytes int, outcome string) error {
	if err := recordUndo(ctx, e, undoRecord{callID: c.CallID, started: started, workspace: ws, channel: "cli", owner: true, resultBytes: resultBytes, outcome: outcome}); err != nil {
		return err
	}
	if outcome != "" {
		return exitCode(exitToolError)
	}
	return nil
}

// undoRecord is what the audit keeps of one undo: the call undone, where
// and for whom it was undone, and its outcome ("" when done, else
// refused, conflict, nothing-to-undo or tool).
type undoRecord struct {
	callID, workspace, channel, session string
	owner                               bool
	started                             time.Time
	resultBytes                         int
	outcome                             string
}

// recordUndo appends an undo to the audit log (toolbelt.RecordUndo), and
// waits until it is written. toolbelt undo and chat's /undo both record
// theirs through it.
func recordUndo(ctx context.Context, e *env, u undoRecord) error {
	return e.tb.RecordUndo(ctx, toolbelt.UndoRecord{
		CallID: u.callID, Started: u.started, ResultBytes: u.resultBytes, Outcome: u.outcome,
		Caller: tool.Identity{Channel: u.channel, SessionKey: u.session, Owner: u.owner, Workspace: u.workspace},
	})
}

func isExit(err error) bool {
	var ec exitCode
	return err == nil || errors.As(err, &ec)
}
