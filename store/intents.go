package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/internal/liveness"
	"github.com/toolbelt/toolbelt/tool"
)

// A change to files is whole or not at all across a crash, and recorded
// even when its call is never answered, because the journal keeps it as an
// intent first: Intend keeps every file's state before and after, as the
// call's file_changes rows hidden from undo, before the first file changes.
// Made (every file changed) or Dropped (none left changed) end it; with
// JournalOptions.AwaitAnswers the intent lasts until Answered says the
// call's answer is in the audit log too. Closing it makes the rows the
// call's journal entry. An intent that is not closed — its process killed
// between two files or before the answer, its answer not recorded, a
// change that could not be put back (with AwaitAnswers; see Dropped) —
// stays its process's until the process ends; then Recover, at the next
// start, has it completed or rolled back, and recorded.
//
// Which process an intent belongs to is a lock file that process holds
// (package liveness) in the store's lock directory (LockDir), named in the
// intent with the directory's site id: processes that share the directory
// take over the intents of the ones that ended, and leave the others'
// alone.

// process is this process's lock and its lock directory's site id, made
// at the first intent.
type process struct {
	mu   sync.Mutex
	site string
	lock *liveness.Holder
}

// processLock returns the site id and this process's lock name, making
// them at first use; the lock files of ended processes that no intent
// names are swept then.
func (s *Store) processLock(ctx context.Context) (site, owner string, err error) {
	p := &s.process
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lock != nil {
		return p.site, p.lock.Name(), nil
	}
	if s.locks == "" {
		return "", "", errors.New("the store has no lock directory (there is no user data directory): give one with store.LockDir")
	}
	site, err = liveness.Site(s.locks)
	if err != nil {
		return "", "", err
	}
	named, err := readAll(ctx, s, func(row scanner) (owner string, err error) {
		err = row.Scan(&owner)
		return owner, err
	}, "SELECT DISTINCT owner FROM file_intents WHERE site = ?", site)
	if err != nil {
		return "", "", fmt.Errorf("reading the owners of intents: %w", err)
	}
	lock, err := liveness.Hold(s.locks)
	if err != nil {
		return "", "", err
	}
	keep := map[string]bool{lock.Name(): true}
	for _, o := range named {
		keep[o] = true
	}
	// Sweeping only tidies the directory: a file it leaves is harmless.
	_ = liveness.Sweep(s.locks, func(name string) bool { return keep[name] })
	p.site, p.lock = site, lock
	return site, lock.Name(), nil
}

// releaseProcess lets go of this process's lock, removing its file when no
// intent names it any more.
func (s *Store) releaseProcess() error {
	p := &s.process
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lock == nil {
		return nil
	}
	var n int
	err := s.Read(context.Background(), func(tx *Tx) error {
		return tx.QueryRow(context.Background(), "SELECT COUNT(*) FROM file_intents WHERE site = ? AND owner = ?", p.site, p.lock.Name()).Scan(&n)
	})
	lock := p.lock
	p.lock = nil
	return lock.Release(err == nil && n == 0)
}

// openIntents are the intents of a journal's calls that this process has
// not closed yet, by call id.
type openIntents struct {
	mu    sync.Mutex
	calls map[string]*openIntent
}

// openIntent is one call's intent as it goes.
type openIntent struct {
	id       int64 // 0 until kept
	made     bool  // every change is made
	answered bool  // Answered was called
	recorded bool  // the answer is in the audit log, Answered said
}

// add registers the call's intent before it is kept. A call cancelled
// already (abandoned at its time limit, its answer given) registers none,
// so no intent waits for an answer that came before it.
func (o *openIntents) add(ctx context.Context, callID string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.calls[callID] != nil {
		return fmt.Errorf("call %s is already changing files: a call id must not be used by two calls at once", callID)
	}
	o.calls[callID] = &openIntent{}
	return nil
}

// update applies f to the call's intent; when f says the intent is done
// it is forgotten. It returns a copy of the intent, nil when there is none.
func (o *openIntents) update(callID string, f func(*openIntent) (done bool)) (*openIntent, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	oi := o.calls[callID]
	if oi == nil {
		return nil, false
	}
	done := f(oi)
	if done {
		delete(o.calls, callID)
	}
	c := *oi
	return &c, done
}

// Intend implements [tool.IntentJournal]: it keeps in — the call and its
// arguments, its caller, the scope ctx carries and every change — as an
// intent of this
// process, in one transaction, and returns once it is committed. The
// changes are the call's file_changes rows, hidden from Changes until the
// intent is closed. It fails when ctx is done, when the call already has
// an intent under way here, and when the store cannot keep it.
func (j *Journal) Intend(ctx context.Context, in tool.Intent) error {
	if in.CallID == "" || len(in.Changes) == 0 {
		return fmt.Errorf("keeping an intent: the call id (%q) and the changes (%d) must not be empty", in.CallID, len(in.Changes))
	}
	for _, c := range in.Changes {
		if c.Path == "" {
			return fmt.Errorf("keeping the intent of call %s: a change has no path", in.CallID)
		}
	}
	site, owner, err := j.s.processLock(ctx)
	if err != nil {
		return fmt.Errorf("keeping the intent of call %s: %w", in.CallID, err)
	}
	if err := j.open.add(ctx, in.CallID); err != nil {
		return fmt.Errorf("keeping the intent of call %s: %w", in.CallID, err)
	}
	caller, _ := json.Marshal(in.Caller) // an Identity always marshals
	scope, _ := tool.ScopeFrom(ctx)
	now := j.s.now().UnixNano()
	var id int64
	err = j.s.Write(ctx, func(tx *Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO file_intents (call_id, tool, arguments, caller, workspace, site, owner, created_ns)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, in.CallID, in.Tool, string(in.Arguments), string(caller), scope.Workspace, site, owner, now).Scan(&id); err != nil {
			return err
		}
		for _, c := range in.Changes {
			if err := insertChange(ctx, tx, in.CallID, now, c, scope, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		j.open.update(in.CallID, func(*openIntent) bool { return true })
		return fmt.Errorf("keeping the intent of call %s: %w", in.CallID, err)
	}
	j.open.update(in.CallID, func(oi *openIntent) bool { oi.id = id; return false })
	return nil
}

// Made implements [tool.IntentJournal]: the changes become the call's
// journal entry and the intent is closed — with AwaitAnswers, once
// Answered says the answer is recorded too.
func (j *Journal) Made(ctx context.Context, callID string) error {
	oi, done := j.open.update(callID, func(oi *openIntent) bool {
		oi.made = true
		return !j.o.AwaitAnswers || oi.answered
	})
	switch {
	case oi == nil:
		return fmt.Errorf("closing the intent of call %s: it has none under way", callID)
	case !done || j.o.AwaitAnswers && !oi.recorded:
		return nil
	}
	return j.keep(ctx, callID, oi.id)
}

// Answered says the call was answered, and whether its answer is
// recorded in the audit log; the composition root calls it for every call
// once the call's audit record is written, when the journal has
// AwaitAnswers. A call that changed files then has its intent closed: its
// changes become its journal entry. When its answer could not be recorded
// the intent stays this process's, for Recover to record once the process
// has ended (whether the record was made after all is known then). A call
// with no intent under way is no concern of the journal.
func (j *Journal) Answered(ctx context.Context, callID string, recorded bool) error {
	oi, done := j.open.update(callID, func(oi *openIntent) bool {
		oi.answered, oi.recorded = true, recorded
		return oi.made
	})
	if oi == nil || !done || !recorded {
		return nil
	}
	return j.keep(ctx, callID, oi.id)
}

// keep closes a made intent: its rows become the call's journal entry.
func (j *Journal) keep(ctx context.Context, callID string, id int64) error {
	ctx = context.WithoutCancel(ctx) // the files changed: close it even if the call was cancelled since
	err := j.s.Write(ctx, func(tx *Tx) error { return closeIntent(ctx, tx, callID, id, true, j.s.now().Add(-j.o.MaxAge)) })
	if err != nil {
		return fmt.Errorf("closing intent %d: %w", id, err)
	}
	return nil
}

// Dropped implements [tool.IntentJournal]: the intent and its rows go.
// When not every file was put back, the intent stays for Recover to roll
// the change back: with AwaitAnswers it stays this process's until the
// process ends (the call's answer is recorded by then, and Recover finds
// it); otherwise it belongs to no process, and any Recover may take it now.
func (j *Journal) Dropped(ctx context.Context, callID string, restored bool) error {
	oi, _ := j.open.update(callID, func(*openIntent) bool { return true })
	switch {
	case oi == nil:
		return fmt.Errorf("dropping the intent of call %s: it has none under way", callID)
	case !restored && j.o.AwaitAnswers:
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	err := j.s.Write(ctx, func(tx *Tx) error {
		if !restored {
			return leave(ctx, tx, oi.id, "")
		}
		return closeIntent(ctx, tx, callID, oi.id, false, time.Time{})
	})
	if err != nil {
		return fmt.Errorf("dropping the intent of call %s: %w", callID, err)
	}
	return nil
}

// leave leaves intent id to any Recover: it belongs to no process. With
// owner set, only while it is owner's.
func leave(ctx context.Context, tx *Tx, id int64, owner string) error {
	q, args := "UPDATE file_intents SET owner = '' WHERE id = ?", []any{id}
	if owner != "" {
		q, args = q+" AND owner = ?", append(args, owner)
	}
	_, err := tx.Exec(ctx, q, args...)
	return err
}

// closeIntent removes the intent id of call callID: its rows become the
// call's journal entry when keep is set (and the entries older than
// expired go), or go with it.
func closeIntent(ctx context.Context, tx *Tx, callID string, id int64, keep bool, expired time.Time) error {
	if _, err := tx.Exec(ctx, "DELETE FROM file_intents WHERE id = ?", id); err != nil {
		return err
	}
	if !keep {
		_, err := tx.Exec(ctx, "DELETE FROM file_changes WHERE call_id = ? AND intent_id = ?", callID, id)
		return err
	}
	return expire(ctx, tx, expired)
}

// made is the condition on a file_changes row that is part of its call's
// journal entry: recorded once made (intent_id NULL), or of an intent that
// is closed.
const made = "NOT EXISTS (SELECT 1 FROM file_intents WHERE file_intents.id = file_changes.intent_id)"

// expire deletes the journal entries made before t.
func expire(ctx context.Context, tx *Tx, t time.Time) error {
	_, err := tx.Exec(ctx, "DELETE FROM file_changes WHERE created_ns < ? AND "+made, t.UnixNano())
	return err
}

// Interrupted is a change Recover found unfinished: the intent of a call
// whose process ended before the change was made, or before the call's
// answer was recorded.
type Interrupted struct {
	tool.Intent
	// Workspace is where the call ran (absolute, links resolved).
	Workspace string
	// Time is when the intent was kept, just before the first file changed.
	Time time.Time
}

// Recover finds the intents that processes which ended (or gave up on
// them) left in workspace and hands each to settle, which brings its files
// to a whole state and records it: kept says the change stands (its files
// are as the call left them) and becomes the call's journal entry, which
// undo takes back; otherwise its rows go. An intent is claimed in a
// transaction before it is settled, so that of processes recovering at
// once one settles it; an intent whose settle fails is left for the next
// Recover. A process that ends while it recovers leaves its claims to the
// next: settle must be idempotent. Intents of running processes, and of
// processes that use another lock directory, are left alone. It returns
// how many intents were settled.
//
// ended, when not nil, is told each ended process (its lock's name, an
// internal/liveness name) once, before the first of its intents is
// claimed, for a recovery that waits for what the process left elsewhere
// (its audit spool). Told before the claim, not between a claim and its
// settling: a claimed intent is one other processes' calls no longer wait
// for, so nothing slow may happen there. And told after the process was
// seen to have ended, however late it ended: a process killed while
// Recover runs is waited for too.
func (j *Journal) Recover(ctx context.Context, workspace string, ended func(ctx context.Context, owner string), settle func(context.Context, Interrupted) (kept bool, err error)) (int, error) {
	site, me, err := j.s.processLock(ctx)
	if err != nil {
		return 0, fmt.Errorf("recovering interrupted changes: %w", err)
	}
	type found struct {
		id    int64
		owner string
		in    Interrupted
	}
	intents, err := readAll(ctx, j.s, func(row scanner) (f found, err error) {
		var args, caller string
		var ns int64
		if err := row.Scan(&f.id, &f.in.CallID, &f.in.Tool, &args, &caller, &f.owner, &ns); err != nil {
			return f, err
		}
		if args != "" {
			f.in.Arguments = json.RawMessage(args)
		}
		f.in.Workspace, f.in.Time = workspace, time.Unix(0, ns)
		return f, json.Unmarshal([]byte(caller), &f.in.Caller)
	}, "SELECT id, call_id, tool, arguments, caller, owner, created_ns FROM file_intents WHERE site = ? AND workspace = ? ORDER BY id", site, workspace)
	if err != nil {
		return 0, fmt.Errorf("recovering interrupted changes: %w", err)
	}
	settled := 0
	var errs []error
	told := map[string]bool{}
	for _, f := range intents {
		if f.owner == me {
			continue // this process's own, under way
		}
		err := j.recoverOne(ctx, f.id, f.owner, me, f.in, func() {
			if ended != nil && f.owner != "" && !told[f.owner] {
				told[f.owner] = true
				ended(ctx, f.owner)
			}
		}, settle)
		if errors.Is(err, errNotClaimed) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("recovering the change of call %s: %w", f.in.CallID, err))
			continue
		}
		settled++
	}
	return settled, errors.Join(errs...)
}

// errNotClaimed is an intent another process holds or took first.
var errNotClaimed = errors.New("not claimed")

// recoverOne claims intent id from owner, when owner has ended (telling
// ended first), and settles it.
func (j *Journal) recoverOne(ctx context.Context, id int64, owner, me string, in Interrupted, ended func(), settle func(context.Context, Interrupted) (bool, error)) error {
	alive, err := liveness.Alive(j.s.locks, owner)
	if err != nil {
		return err
	}
	if alive {
		return errNotClaimed
	}
	ended()
	claimed := false
	if err := j.s.Write(ctx, func(tx *Tx) error {
		r, err := tx.Exec(ctx, "UPDATE file_intents SET owner = ? WHERE id = ? AND owner = ?", me, id, owner)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		claimed = n == 1
		return err
	}); err != nil {
		return err
	}
	if !claimed {
		return errNotClaimed
	}
	if in.Changes, err = j.intentChanges(ctx, in.CallID, id); err != nil {
		return err
	}
	kept, err := settle(ctx, in)
	if err == nil {
		err = j.s.Write(ctx, func(tx *Tx) error { return closeIntent(ctx, tx, in.CallID, id, kept, j.s.now().Add(-j.o.MaxAge)) })
	}
	if err != nil {
		// Left for the next Recover, of any process.
		bg := context.WithoutCancel(ctx)
		_ = j.s.Write(bg, func(tx *Tx) error { return leave(bg, tx, id, me) })
	}
	return err
}

// intentChanges returns the changes of intent id of call callID, in
// order.
func (j *Journal) intentChanges(ctx context.Context, callID string, id int64) ([]tool.FileChange, error) {
	return readAll(ctx, j.s, scanChange, `SELECT path, existed, before, mode, exists_after, after_sha256, after
	FROM file_changes WHERE call_id = ? AND intent_id = ? ORDER BY id`, callID, id)
}

// InterruptedIn returns the workspaces where the call has a change under
// way or interrupted (an intent of a process that shares this one's lock
// directory), sorted: undo recovers them before it looks for the call's
// changes.
func (j *Journal) InterruptedIn(ctx context.Context, callID string) ([]string, error) {
	site, _, err := j.s.processLock(ctx)
	if err != nil {
		return nil, err
	}
	return readAll(ctx, j.s, func(row scanner) (ws string, err error) {
		err = row.Scan(&ws)
		return ws, err
	}, "SELECT DISTINCT workspace FROM file_intents WHERE call_id = ? AND site = ? ORDER BY workspace", callID, site)
}

// insertChange adds one change of the call to file_changes: part of the
// call's journal entry, or of the intent whose id intent holds (an int64).
func insertChange(ctx context.Context, tx *Tx, callID string, ns int64, c tool.FileChange, scope tool.Scope, intent any) error {
	_, err := tx.Exec(ctx, `INSERT INTO file_changes
	(call_id, created_ns, path, existed, before, mode, exists_after, after_sha256, after, workspace, session_key, intent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		callID, ns, c.Path, c.Existed, c.Before, int64(c.Mode), c.Exists, c.AfterSHA256, c.After, scope.Workspace, scope.Session, intent)
	return err
}

// scanChange reads a change as Changes and intentChanges select it.
func scanChange(row scanner) (tool.FileChange, error) {
	var (
		c    tool.FileChange
		mode int64
	)
	if err := row.Scan(&c.Path, &c.Existed, &c.Before, &mode, &c.Exists, &c.AfterSHA256, &c.After); err != nil {
		return c, err
	}
	c.Mode = fs.FileMode(mode)
	if len(c.Before) == 0 {
		c.Before = nil
	}
	if len(c.After) == 0 {
		c.After = nil
	}
	return c, nil
}
