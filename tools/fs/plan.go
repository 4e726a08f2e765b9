package fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"sync/atomic"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/changeset"
	"github.com/toolbelt/toolbelt/tool"
)

// plan is what a call of write, edit or apply_patch will do to files, worked
// out in memory — every file's state before and after, keyed by canonical
// path — before anything is written, with those files locked. The call
// commits it; its preview describes it. Either way, release it after.
type plan struct {
	b       fsbridge.Bridge
	files   map[string]*planned
	order   []string // canonical paths in the order they were first touched
	release func()   // unlocks the files
	// reads is the read state of the call's session when it is held to
	// read before edit (see Reads), else nil.
	reads *sessionReads
}

// planned is one file's state before and after the call.
type planned struct {
	name   string // the path as the call gave it
	canon  string
	from   string // for a file moved here, the canonical path it came from
	before changeset.State
	after  changeset.State
}

// changeTool makes a tool that changes files through a plan. Its calls plan
// the change with the files locked and hand it to done, which commits it
// (commit returns the note to add to the result) and words the result; its
// preview plans the change the same way and describes it with summary,
// writing nothing.
func changeTool[In, D any](name, description string,
	plan func(context.Context, tool.Invocation, In) (*plan, D, error),
	done func(in In, d D, commit func() (string, error)) (tool.Result, error),
	summary func(in In, d D) string,
) (tool.Tool, error) {
	t, err := tool.New(name, description, func(ctx context.Context, in In, inv tool.Invocation) (tool.Result, error) {
		pl, d, err := plan(ctx, inv, in)
		if err != nil {
			return tool.Result{}, err
		}
		defer pl.release()
		return done(in, d, func() (string, error) {
			note, err := pl.commit(ctx, inv)
			if err == nil {
				pl.reads.sawPlan(pl)
			}
			return note, err
		})
	})
	if err != nil {
		return t, err
	}
	t.Preview, err = tool.NewPreview(name, func(ctx context.Context, in In, inv tool.Invocation) (tool.Effects, error) {
		pl, d, err := plan(ctx, inv, in)
		if err != nil {
			return tool.Effects{}, err
		}
		pl.release()
		return pl.effects(summary(in, d)), nil
	})
	return t, err
}

// lockedPlan returns an empty plan on the call's bridge, with the files the
// paths name locked.
func (s *set) lockedPlan(ctx context.Context, inv tool.Invocation, paths ...string) (*plan, error) {
	b, unlock, err := s.lockedBridge(ctx, inv, paths...)
	if err != nil {
		return nil, err
	}
	return &plan{b: b, files: map[string]*planned{}, release: unlock, reads: readsOf(inv)}, nil
}

// seen refuses a change to f, a file that existed before the call, when
// the call is held to read before edit and its session has not seen the
// file's current content; name is the path as the call gave it.
func (pl *plan) seen(f *planned, name string) error {
	return pl.reads.mustHaveSeen(pl.b, f, name)
}

// file returns the planned state of the file at p, reading it on first use.
func (pl *plan) file(ctx context.Context, p string) (*planned, error) {
	canon, err := pl.b.Resolve(ctx, p)
	if err != nil {
		return nil, problem(p, err)
	}
	if f, ok := pl.files[canon]; ok {
		return f, nil
	}
	f := &planned{name: p, canon: canon, before: changeset.State{Mode: 0o644}}
	st, err := pl.b.Stat(ctx, p)
	switch {
	case err == nil && st.IsDir():
		return nil, problem(p, &iofs.PathError{Op: "write", Path: p, Err: fsbridge.ErrIsDir})
	case err == nil:
		data, err := pl.b.ReadFile(ctx, p)
		if err != nil {
			return nil, problem(p, err)
		}
		f.before = changeset.State{Exists: true, Data: data, Mode: st.Mode().Perm()}
	case !errors.Is(err, iofs.ErrNotExist):
		return nil, problem(p, err)
	}
	f.after = f.before
	pl.files[canon] = f
	pl.order = append(pl.order, canon)
	return f, nil
}

// writable checks that the call may write p: protected paths and paths
// that leave the workspace are refused before anything is written.
func (pl *plan) writable(ctx context.Context, p string) error {
	err := pl.b.CheckWrite(ctx, p)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil // the parent directory is made when the file is written
	}
	return problem(p, err)
}

// put plans data as f's content after the call.
func (f *planned) put(data []byte) {
	f.after = changeset.State{Exists: true, Data: data, Mode: f.before.Mode}
}

// remove plans f's removal.
func (f *planned) remove() { f.after = changeset.State{} }

// changed reports whether the call changes f.
func (f *planned) changed() bool {
	return f.before.Exists != f.after.Exists || string(f.before.Data) != string(f.after.Data)
}

// changes returns the plan's changes, in the order the files were first
// touched.
func (pl *plan) changes() []changeset.Change {
	var out []changeset.Change
	for _, canon := range pl.order {
		if f := pl.files[canon]; f.changed() {
			out = append(out, changeset.Change{Path: canon, From: f.from, Before: f.before, After: f.after})
		}
	}
	return out
}

// effects describes the plan for a preview: summary, the diff and the files.
func (pl *plan) effects(summary string) tool.Effects {
	cs := pl.changes()
	e := tool.Effects{Summary: summary, Diff: changeset.Diff(cs)}
	for _, c := range cs {
		e.Files = append(e.Files, c.Path)
	}
	return e
}

// commit makes the plan's changes, all or nothing, and records them in the
// call's journal. With a journal that keeps intents, the call's intent is
// kept first — when it cannot be, no file changes — and closed after;
// otherwise each change is recorded once made. It returns a note for the
// result when the changes could not be recorded (see record).
func (pl *plan) commit(ctx context.Context, inv tool.Invocation) (string, error) {
	cs := pl.changes()
	ij, intends := intentJournal(inv, cs)
	if intends {
		if err := ij.Intend(ctx, intentOf(inv, cs)); err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			if !refusing.Swap(true) {
				slog.ErrorContext(ctx, "keeping the intent of a file change failed; changes are refused until one can be kept (later refusals are not logged)",
					"call", inv.Call.ID, "tool", inv.Call.Name, "err", err)
			}
			return "", &notKept{err}
		}
		if refusing.Swap(false) {
			slog.InfoContext(ctx, "the intents of file changes can be kept again: changes run again")
		}
	}
	err := changeset.Apply(ctx, pl.b, cs)
	var step *changeset.StepError
	stepped := errors.As(err, &step)
	note := ""
	if intends {
		note = closeIntent(ctx, ij, inv, err == nil, !stepped || step.Unrestored == nil)
	}
	if stepped {
		name := pl.files[step.Path].name
		perr := problem(name, step.Err)
		var ie *tool.InputError
		switch {
		case step.Unrestored != nil:
			return "", fmt.Errorf("writing %s: %w; then a file already changed could not be put back (%v), so the change is left half made%s", name, step.Err, step.Unrestored, recoveredLater(intends))
		case len(cs) == 1:
			return "", perr
		case errors.As(perr, &ie):
			return "", tool.InputErrorf("%s The files already changed were put back: no file was changed.", ie.Message)
		}
		return "", fmt.Errorf("writing %s: %w (the files already changed were put back)", name, step.Err)
	}
	if err != nil {
		return "", err
	}
	if intends {
		return note, nil
	}
	return record(ctx, inv, cs), nil
}

// intentJournal returns the call's journal when it keeps intents and the
// plan changes files.
func intentJournal(inv tool.Invocation, cs []changeset.Change) (tool.IntentJournal, bool) {
	if inv.Context == nil || len(cs) == 0 {
		return nil, false
	}
	ij, ok := inv.Context.Journal.(tool.IntentJournal)
	return ij, ok
}

// intentOf is the intent of the call to make the changes cs.
func intentOf(inv tool.Invocation, cs []changeset.Change) tool.Intent {
	in := tool.Intent{CallID: inv.Call.ID, Tool: inv.Call.Name, Arguments: inv.Call.Arguments, Caller: inv.Context.Identity}
	for _, c := range cs {
		in.Changes = append(in.Changes, fileChange(c))
	}
	return in
}

// closeIntent closes the call's intent once Apply is done: made when it
// succeeded, else dropped (restored: every file changed was put back).
// When the journal fails the intent stays, and recovery at the next start
// settles and records the change; the note returned says so.
func closeIntent(ctx context.Context, ij tool.IntentJournal, inv tool.Invocation, made, restored bool) string {
	ctx = context.WithoutCancel(ctx) // the files changed: settle it even if the call was cancelled since
	var err error
	if made {
		err = ij.Made(ctx, inv.Call.ID)
	} else {
		err = ij.Dropped(ctx, inv.Call.ID, restored)
	}
	if err == nil {
		return ""
	}
	slog.ErrorContext(ctx, "closing the intent of a file change failed; recovery at the next start settles it",
		"call", inv.Call.ID, "tool", inv.Call.Name, "err", err)
	return " Note: this change cannot be undone for now (recording it for undo failed); it is recorded when Toolbelt next starts."
}

// recoveredLater says, for a change left half made, whether recovery
// settles it.
func recoveredLater(intends bool) string {
	if intends {
		return ": it is rolled back when Toolbelt next starts"
	}
	return ""
}

// refusing is set while the changes of this process are refused because
// their intents cannot be kept, so that a full disk is logged once, not
// once per call.
var refusing atomic.Bool

// notKept is the refusal of a change whose intent could not be kept: no
// file was changed.
type notKept struct{ err error }

func (e *notKept) Error() string {
	return fmt.Sprintf("no file was changed: the change could not be recorded for undo and crash recovery first (%v)", e.err)
}

func (e *notKept) Unwrap() error { return e.err }

// ErrorInfo implements [tool.InfoError]: what the model is told.
func (e *notKept) ErrorInfo() tool.ErrorInfo {
	return tool.ErrorInfo{
		Message:    "No file was changed: Toolbelt records every change for undo and crash recovery before making it, and its store could not record this one (the error is in Toolbelt's log).",
		CanRetry:   true,
		Suggestion: "Retry later. If it keeps failing, the person running Toolbelt must make room in its data directory (or fix its database).",
	}
}

// record keeps the changes a call made in the journal of its context, so
// they can be undone. The files are already written, so a failure leaves
// them written: the error is logged, what was recorded of this call is
// dropped when the journal can do that (so undo never takes back half a
// call), and the returned note tells the model that the change cannot be
// undone.
func record(ctx context.Context, inv tool.Invocation, cs []changeset.Change) string {
	if inv.Context == nil || inv.Context.Journal == nil || len(cs) == 0 {
		return ""
	}
	ctx = context.WithoutCancel(ctx) // the files changed: record it even if the call was cancelled since
	j, id := inv.Context.Journal, inv.Call.ID
	for _, c := range cs {
		err := j.Record(ctx, id, fileChange(c))
		if err == nil {
			continue
		}
		slog.ErrorContext(ctx, "recording a file change for undo failed; the change stays and cannot be undone",
			"call", id, "tool", inv.Call.Name, "path", c.Path, "err", err)
		if d, ok := j.(interface {
			DeleteChanges(ctx context.Context, callID string) error
		}); ok {
			if err := d.DeleteChanges(ctx, id); err != nil {
				slog.ErrorContext(ctx, "dropping the partial undo record failed", "call", id, "err", err)
			}
		}
		return " Note: this change cannot be undone (recording it for undo failed)."
	}
	return ""
}

// fileChange is what the journal keeps of a change.
func fileChange(c changeset.Change) tool.FileChange {
	fc := tool.FileChange{Path: c.Path, Existed: c.Before.Exists, Exists: c.After.Exists}
	if c.Before.Exists {
		fc.Before, fc.Mode = c.Before.Data, c.Before.Mode
	}
	if c.After.Exists {
		sum := sha256.Sum256(c.After.Data)
		fc.After, fc.AfterSHA256 = c.After.Data, hex.EncodeToString(sum[:])
	}
	return fc
}
