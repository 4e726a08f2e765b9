package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/changeset"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// A change to files is whole or not at all, and recorded, across kill -9:
// the file tools keep their call's intent in the journal before the first
// file changes, and the intent lasts until the call's audit record is
// written (answering). What a killed process leaves is settled by the next
// process that works in the workspace, before its first call runs there
// (recoverChanges).

// answering is the run's auditor: once a call's audit record is written,
// or fails to be, it tells the journal (store.Journal.Answered), which
// closes the call's intent — its changes become its journal entry, which
// undo takes back — or, when the record failed, keeps the change for
// recovery to record once this process has ended.
type answering struct {
	invoke.Auditor
	journal *store.Journal
	log     *slog.Logger
}

func (a answering) Append(ctx context.Context, r audit.Record) error {
	err := a.Auditor.Append(ctx, r)
	if jerr := a.journal.Answered(ctx, r.CallID, err == nil); jerr != nil {
		a.log.Error("closing the intent of a call's file change failed; recovery at the next start records it", "call", r.CallID, "err", jerr)
	}
	return err
}

// recoveries are the workspaces whose interrupted changes this run settles
// (recoverChanges), each with a channel closed once it is done.
type recoveries struct {
	mu   sync.Mutex
	done map[string]chan struct{}
}

// recoveries returns the run's recoveries, made by the first pipeline or
// undo (both set up before calls run).
func (e *env) recoveries() *recoveries {
	if e.recovered == nil {
		e.recovered = &recoveries{done: map[string]chan struct{}{}}
	}
	return e.recovered
}

// begin returns the channel of ws, and whether the caller is the first to
// ask: it settles ws, then closes the channel.
func (r *recoveries) begin(ws string) (chan struct{}, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.done[ws]; ok {
		return ch, false
	}
	ch := make(chan struct{})
	r.done[ws] = ch
	return ch, true
}

// recoverFirst is the pipeline's last step: a call runs only once the
// interrupted changes of its workspace are settled (recoverChanges).
func (e *env) recoverFirst(st *store.Store, journal *store.Journal) invoke.Middleware {
	e.recoveries() // made now, before calls run at once
	return func(next invoke.Handler) invoke.Handler {
		return func(ctx context.Context, req *invoke.Request) tool.Result {
			if tc := req.Context; tc != nil && tc.FS != nil && req.Scope.Workspace != "" {
				e.recoverChanges(st, journal, req.Scope.Workspace, tc.FS)
			}
			return next(ctx, req)
		}
	}
}

// recoverChanges settles the changes that calls of ended processes left
// unfinished in workspace ws (absolute, links resolved), through b, once
// per workspace and run; a caller that comes while it runs waits for it.
// Each change is completed or rolled back (changeset.Assess and Settle)
// and recorded in the audit log as an interrupted call — unless the call's
// own record is there, its process having ended after the answer — and a
// change kept becomes its call's journal entry, which toolbelt undo takes
// back. It is the one entry point of recovery: every command that runs
// calls runs it before a call's tool runs (recoverFirst; a server also as
// soon as it has given its first answers), and undo before it looks for a
// call's changes. A failure is logged: the changes are left for the next
// start.
func (e *env) recoverChanges(st *store.Store, journal *store.Journal, ws string, b fsbridge.Bridge) {
	done, first := e.recoveries().begin(ws)
	if !first {
		<-done
		return
	}
	defer close(done)
	l, err := e.auditLog(st)
	if err != nil {
		e.log.Error("recovering interrupted changes; they are left for the next start", "workspace", ws, "err", err)
		return
	}
	r := &recovery{e: e, log: l, b: b}
	if _, err := journal.Recover(context.Background(), ws, r.settle); err != nil {
		e.log.Error("recovering interrupted changes; they are left for the next start", "workspace", ws, "err", err)
	}
}

// recovery settles the interrupted changes of one workspace, through b,
// and records them in log.
type recovery struct {
	e       *env
	log     *auditlog.Log
	b       fsbridge.Bridge
	drained bool // the spool records of ended processes are in the log
}

// settle brings one interrupted change to a whole state and records it,
// and says whether the change stands. It may run again for the same
// change (a recovery killed midway): it finds the files as the last run
// left them, finishes its work, and records the change once.
func (r *recovery) settle(ctx context.Context, in store.Interrupted) (bool, error) {
	cs := changesOf(in.Changes)
	s, err := changeset.Assess(ctx, r.b, cs)
	if err != nil {
		return false, err
	}
	recorded, err := r.recorded(ctx, in.CallID)
	if err != nil {
		return false, err
	}
	// Recorded before the files are put back: a recovery cut short after
	// this finds the record and does not record the change again.
	if !recorded {
		if err := r.log.Append(ctx, interruptedRecord(in, s)); err != nil {
			return false, fmt.Errorf("recording the interrupted call %s: %w", in.CallID, err)
		}
	}
	if err := changeset.Settle(ctx, r.b, cs, s); err != nil {
		return false, err
	}
	r.e.log.Warn("recovered the change of a call that was interrupted", "call", in.CallID, "tool", in.Tool, "outcome", s.Outcome, "workspace", in.Workspace)
	return s.Outcome == changeset.Kept, nil
}

// recorded says whether the audit log holds a record of the call: its own,
// written before its process ended, or that of a recovery cut short. The
// records that ended processes left in the audit spool are moved into the
// log first.
func (r *recovery) recorded(ctx context.Context, callID string) (bool, error) {
	if !r.drained {
		_, dir, err := r.e.storeDSN(os.Getenv)
		if err != nil {
			return false, err
		}
		// All of them: also the spools another process is recovering
		// now, which hold this call's own record maybe.
		if dir != "" {
			n, err := r.log.RecoverAll(ctx, spoolDir(dir))
			if n > 0 {
				r.e.log.Info(recoveredRecords, "records", n)
			}
			if err != nil {
				return false, fmt.Errorf("recovering the audit spool: %w", err)
			}
		}
		r.drained = true
	}
	rs, err := r.log.List(ctx, auditlog.Filter{CallID: callID, Limit: 1})
	return len(rs) > 0, err
}

// interruptedRecord is the audit record of a call whose change recovery
// settled as s: error class "interrupted", the call's own id, tool, caller
// and workspace, and as its arguments the call's ("arguments") beside what
// recovery found and did ("recovery").
func interruptedRecord(in store.Interrupted, s changeset.Settlement) audit.Record {
	args, _ := json.Marshal(struct {
		Arguments json.RawMessage      `json:"arguments,omitempty"`
		Recovery  changeset.Settlement `json:"recovery"`
	}{in.Arguments, s})
	rec := audit.Record{Time: in.Time, CallID: in.CallID, Tool: in.Tool, Arguments: args, IsError: true, ErrorClass: errorInterrupted}
	caller := in.Caller
	caller.Workspace = in.Workspace
	rec.SetCaller(caller)
	return rec
}

// errorInterrupted is the error class of a call recovery recorded: its
// process ended after the call began changing files and before its answer
// was recorded.
const errorInterrupted = "interrupted"

// changesOf turns a journal's changes into changes of files.
func changesOf(fcs []tool.FileChange) []changeset.Change {
	cs := make([]changeset.Change, len(fcs))
	for i, c := range fcs {
		cs[i] = changeset.Change{Path: c.Path,
			Before: changeset.State{Exists: c.Existed, Data: c.Before, Mode: c.Mode},
			After:  changeset.State{Exists: c.Exists, Data: c.After, Mode: c.Mode}}
	}
	return cs
}
