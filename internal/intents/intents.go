// Package intents closes and recovers the intents of file changes: a
// change to files is whole or not at all, and recorded, across kill -9.
// The file tools keep their call's intent in the journal before the first
// file changes, and the intent lasts until the call's audit record is
// written (Answering). What a killed process leaves is settled by the next
// process that works in the workspace, before its first call runs there
// (Recovery). The composition root and the CLI's undo use it.
package intents

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/changeset"
	"github.com/toolbelt/toolbelt/internal/liveness"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// Answering is a pipeline's auditor: once a call's audit record is
// written, or fails to be, it tells the journal (store.Journal.Answered),
// which closes the call's intent — its changes become its journal entry,
// which undo takes back — or, when the record failed, keeps the change for
// recovery to record once this process has ended.
type Answering struct {
	invoke.Auditor
	Journal *store.Journal
	Log     *slog.Logger
}

// Append writes r, then closes its call's intent.
func (a Answering) Append(ctx context.Context, r audit.Record) error {
	err := a.Auditor.Append(ctx, r)
	if jerr := a.Journal.Answered(ctx, r.CallID, err == nil); jerr != nil {
		a.Log.Error("closing the intent of a call's file change failed; recovery at the next start records it", "call", r.CallID, "err", jerr)
	}
	return err
}

// Durable says what the wrapped auditor's Durable says (nil when it cannot
// tell), so the pipeline's audit step still refuses changes while records
// cannot be made durable.
func (a Answering) Durable() error {
	if d, ok := a.Auditor.(invoke.DurableAuditor); ok {
		return d.Durable()
	}
	return nil
}

// RecoveredRecords is what the log says when records of killed processes
// were moved from the spool into the audit log.
const RecoveredRecords = "moved audit records left in the spool into the log"

// Recovery settles the changes that calls of ended processes left
// unfinished, once per workspace and process. Make it before calls run.
type Recovery struct {
	// AuditLog returns the audit log recovered changes are recorded in.
	AuditLog func() (*auditlog.Log, error)
	// SpoolDir is the audit spool of the data directory; "" for
	// PostgreSQL.
	SpoolDir string
	// Log receives what recovery did and what failed.
	Log *slog.Logger

	mu   sync.Mutex
	done map[string]chan struct{}
}

// begin returns the channel of ws, and whether the caller is the first to
// ask: it settles ws, then closes the channel.
func (r *Recovery) begin(ws string) (chan struct{}, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.done[ws]; ok {
		return ch, false
	}
	if r.done == nil {
		r.done = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	r.done[ws] = ch
	return ch, true
}

// First is the pipeline's last step: a call runs only once the
// interrupted changes of its workspace are settled (Settle).
func (r *Recovery) First(journal *store.Journal) invoke.Middleware {
	return func(next invoke.Handler) invoke.Handler {
		return func(ctx context.Context, req *invoke.Request) tool.Result {
			if tc := req.Context; tc != nil && tc.FS != nil && req.Scope.Workspace != "" {
				r.Settle(journal, req.Scope.Workspace, tc.FS)
			}
			return next(ctx, req)
		}
	}
}

// Settle settles the changes that calls of ended processes left unfinished
// in workspace ws (absolute, links resolved), through b, once per
// workspace; a caller that comes while it runs waits for it. Each change
// is completed or rolled back (changeset.Assess and Settle) and recorded
// in the audit log as an interrupted call — unless the call's own record
// is there, its process having ended after the answer — and a change kept
// becomes its call's journal entry, which undo takes back. Every command
// that runs calls settles before a call's tool runs (First; a server also
// as soon as it has given its first answers), and undo before it looks for
// a call's changes. A failure is logged: the changes are left for the next
// start.
func (r *Recovery) Settle(journal *store.Journal, ws string, b fsbridge.Bridge) {
	done, first := r.begin(ws)
	if !first {
		<-done
		return
	}
	defer close(done)
	l, err := r.AuditLog()
	if err != nil {
		r.Log.Error("recovering interrupted changes; they are left for the next start", "workspace", ws, "err", err)
		return
	}
	s := &settler{r: r, log: l, b: b, ws: ws}
	if _, err := journal.Recover(context.Background(), ws, s.awaitEnded, s.settle); err != nil {
		r.Log.Error("recovering interrupted changes; they are left for the next start", "workspace", ws, "err", err)
	}
}

// settler settles the interrupted changes of one workspace, through b,
// and records them in log.
type settler struct {
	r       *Recovery
	log     *auditlog.Log
	b       fsbridge.Bridge
	ws      string
	drained bool // the spool records of ended processes are in the log
}

// settle brings one interrupted change to a whole state and records it,
// and says whether the change stands. It may run again for the same
// change (a recovery killed midway): it finds the files as the last run
// left them, finishes its work, and records the change once.
func (s *settler) settle(ctx context.Context, in store.Interrupted) (bool, error) {
	cs := changesOf(in.Changes)
	st, err := changeset.Assess(ctx, s.b, cs)
	if err != nil {
		return false, err
	}
	recorded, err := s.recorded(ctx, in.CallID)
	if err != nil {
		return false, err
	}
	// Recorded before the files are put back: a recovery cut short after
	// this finds the record and does not record the change again.
	if !recorded {
		if err := s.log.Append(ctx, interruptedRecord(in, st)); err != nil {
			return false, fmt.Errorf("recording the interrupted call %s: %w", in.CallID, err)
		}
	}
	if err := changeset.Settle(ctx, s.b, cs, st); err != nil {
		return false, err
	}
	s.r.Log.Warn("recovered the change of a call that was interrupted", "call", in.CallID, "tool", in.Tool, "outcome", st.Outcome, "workspace", in.Workspace)
	return st.Outcome == changeset.Kept, nil
}

// recorded says whether the audit log holds a record of the call: its own,
// written before its process ended, or that of a recovery cut short. The
// records that ended processes left in the audit spool are moved into the
// log first.
func (s *settler) recorded(ctx context.Context, callID string) (bool, error) {
	if !s.drained {
		// All of them: also the spools another process is recovering
		// now, which hold this call's own record maybe.
		if s.r.SpoolDir != "" {
			n, err := s.log.RecoverAll(ctx, s.r.SpoolDir)
			s.r.logMoved(n)
			if err != nil {
				return false, fmt.Errorf("recovering the audit spool: %w", err)
			}
		}
		s.drained = true
	}
	rs, err := s.log.List(ctx, auditlog.Filter{CallID: callID, Limit: 1})
	return len(rs) > 0, err
}

// awaitEnded moves into the log what the ended process owner (its lock's
// name) left in the audit spool, waiting for its spool to be let go of: a
// process killed a moment ago lets go of its locks one by one as it exits,
// so its process lock may say it ended while its spool is still held — and
// a recovery that went on would record its calls as interrupted, then find
// their own records too. The journal calls it before it claims the first
// of owner's intents (see store.Journal.Recover), also for a process that
// ended while recovery ran. A failure is logged: recovery goes on.
func (s *settler) awaitEnded(ctx context.Context, owner string) {
	pid, ok := liveness.PID(owner)
	if s.r.SpoolDir == "" || !ok {
		return
	}
	n, err := s.log.RecoverProcess(ctx, s.r.SpoolDir, pid, exitingWait)
	s.r.logMoved(n)
	if err != nil {
		s.r.Log.Warn("waiting for the audit spool of an ended process; recovery goes on", "workspace", s.ws, "process", owner, "err", err)
	}
}

// exitingWait is how long recovery waits for the spool of a process that
// has ended to be let go of.
const exitingWait = 2 * time.Second

// logMoved logs that n records of ended processes were moved into the log.
func (r *Recovery) logMoved(n int) {
	if n > 0 {
		r.Log.Info(RecoveredRecords, "records", n)
	}
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
	rec := audit.Record{Time: in.Time, CallID: in.CallID, Tool: in.Tool, Arguments: args, IsError: true, ErrorClass: ErrorInterrupted}
	caller := in.Caller
	caller.Workspace = in.Workspace
	rec.SetCaller(caller)
	return rec
}

// ErrorInterrupted is the error class of a call recovery recorded: its
// process ended after the call began changing files and before its answer
// was recorded.
const ErrorInterrupted = "interrupted"

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
