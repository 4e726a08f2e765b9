package toolbelt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/console"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

// Console returns the web console for what the root opened: o's store,
// audit log, journal, registry, policy, configuration, job queue,
// scheduler, nodes, undo, permission mode, live feed and canvas host are filled
// in; the program serving it sets the tokens, the URL and the MCP endpoint.
// Its undo records each undo in the audit log as toolbelt undo does, on
// channel "console" for the console user; its mode switch is SwitchMode's.
func (tb *Toolbelt) Console(o console.Options) (*console.Console, error) {
	if tb.st == nil || tb.auditLog == nil {
		return nil, errors.New("the console needs the store and the audit log: the root was opened with ToolsOnly")
	}
	o.Store, o.Audit, o.Journal = tb.st, tb.auditLog, tb.journal
	o.Registry, o.Policy, o.Config = tb.reg, tb.policy, tb.cfg
	o.Jobs, o.Scheduler, o.Context = tb.jobs, tb.sched, tb.base
	o.Undo, o.Feed = tb.undoFor, tb.feed
	if reg, err := tb.Nodes(); err == nil {
		o.Nodes = reg
	}
	if tb.canvas != nil {
		o.Canvas = tb.canvas.Handler()
	}
	if tb.modes != nil {
		o.Mode, o.SwitchMode = tb.Mode, tb.SwitchMode
	}
	if o.Logger == nil {
		o.Logger = tb.log
	}
	return console.New(o)
}

// undoFor undoes a call for a console user and records the undo.
func (tb *Toolbelt) undoFor(ctx context.Context, ws, callID, by string) (undo.Report, error) {
	started := time.Now()
	report, err := tb.Undo(ctx, ws, callID)
	u := UndoRecord{CallID: callID, Started: started, Caller: tool.Identity{Channel: "console", Principal: by, Owner: true, Workspace: ws}}
	var conflict *undo.ConflictError
	switch {
	case errors.As(err, &conflict):
		u.Outcome = "conflict"
	case errors.Is(err, undo.ErrNothingToUndo):
		u.Outcome = "nothing-to-undo"
	case err != nil:
		u.Outcome = "tool"
	default:
		u.ResultBytes = len(report.String())
	}
	return report, errors.Join(err, tb.RecordUndo(ctx, u))
}

// UndoRecord is what the audit log keeps of one undo.
type UndoRecord struct {
	// CallID is the call undone.
	CallID string
	// Started is when the undo began.
	Started time.Time
	// Caller is who undid it, and in which workspace.
	Caller tool.Identity
	// ResultBytes is the size of what the undo answered.
	ResultBytes int
	// Outcome is "" when the call was undone, else why not: "refused",
	// "conflict", "nothing-to-undo" or "tool".
	Outcome string
}

// RecordUndo appends an undo to the audit log as a call of its own (tool
// undo, its own id, the call undone in its arguments), and waits until it
// is durable. toolbelt undo, chat's /undo and the console record theirs
// through it.
func (tb *Toolbelt) RecordUndo(ctx context.Context, u UndoRecord) error {
	args, _ := json.Marshal(map[string]string{"callId": u.CallID})
	rec := audit.Record{
		Time: u.Started, CallID: tool.NewCallID("undo"), Tool: "undo", Arguments: args, Duration: time.Since(u.Started),
		ResultBytes: u.ResultBytes, IsError: u.Outcome != "", ErrorClass: u.Outcome,
	}
	rec.SetCaller(u.Caller)
	if err := tb.Record(ctx, rec); err != nil {
		return fmt.Errorf("recording the undo of call %s in the audit log: %w", u.CallID, err)
	}
	return nil
}
