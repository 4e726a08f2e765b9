// Package undo takes back the file changes of a call. The file tools
// (write, edit, apply_patch) record every change they make in the journal of
// their tool context ([tool.Context].Journal), keyed by call id, with the
// file's state before and after; [Undo] puts the files back as they were
// before the call:
//
//	j := &undo.MemoryJournal{} // or the store, which keeps changes across restarts
//	r := invoke.New(reg, &tool.Context{FS: bridge, Journal: j})
//	r.Run(ctx, tool.Call{ID: "call_1", Name: "write", Arguments: args})
//	report, err := undo.Undo(ctx, j, bridge, "call_1")
//
// Undo is all or nothing and refuses to overwrite work done since: it
// changes nothing unless every file is still as the call left it, and
// otherwise returns a [*ConflictError] showing how each file changed since.
package undo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/changeset"
	"github.com/toolbelt/toolbelt/internal/textdiff"
	"github.com/toolbelt/toolbelt/tool"
)

// Source is where the file changes of calls are kept: the journal the file
// tools record into. [MemoryJournal] implements it, and so does the store.
type Source interface {
	// Changes returns the changes the call made, in the order they were
	// made; none when nothing is recorded for it.
	Changes(ctx context.Context, callID string) ([]tool.FileChange, error)
	// DeleteChanges forgets the call's changes.
	DeleteChanges(ctx context.Context, callID string) error
}

// ErrNothingToUndo matches the error of undoing a call that has no recorded
// changes: it changed no files, was undone already, or its record expired.
var ErrNothingToUndo = errors.New("nothing to undo")

// Report says what an undo did.
type Report struct {
	// CallID is the call undone, when one was asked for.
	CallID string `json:"callId,omitempty"`
	// Calls are the calls undone, when several were asked for: those that
	// had changes, in the order they were made.
	Calls []string `json:"calls,omitempty"`
	// Files are the files put back, in the order undone.
	Files []Restored `json:"files"`
}

// Restored is one file an undo put back.
type Restored struct {
	// Path is slash-separated, relative to the workspace root.
	Path string `json:"path"`
	// Action is "reverted" (its earlier content is back), "deleted" (the
	// call had created it) or "recreated" (the call had deleted it).
	Action string `json:"action"`
}

// String describes the report in one line for people.
func (r Report) String() string {
	parts := make([]string, len(r.Files))
	for i, f := range r.Files {
		parts[i] = f.Action + " " + f.Path
	}
	return fmt.Sprintf("Undid %s: %s.", callsText(r.CallID, r.Calls), strings.Join(parts, ", "))
}

// callsText names the call id, or the calls ids.
func callsText(id string, ids []string) string {
	switch {
	case id != "":
		return "call " + id
	case len(ids) == 1:
		return "call " + ids[0]
	}
	return fmt.Sprintf("%d calls (%s)", len(ids), strings.Join(ids, ", "))
}

// ConflictError is the refusal to undo calls because files changed since
// they ran. Nothing was changed.
type ConflictError struct {
	// CallID is the call that was not undone, when one was asked for;
	// Calls the calls, when several were.
	CallID string
	Calls  []string
	// Files are the files that are no longer as the calls left them.
	Files []Conflict
}

// Conflict is one file that changed since the call.
type Conflict struct {
	// Path is slash-separated, relative to the workspace root.
	Path string `json:"path"`
	// Problem says how it changed: "changed since", "deleted since",
	// "created since", "a directory is there now", or, between two of the
	// calls undone together, "changed between call A and call B".
	Problem string `json:"problem"`
	// Diff, for a file changed since, is a unified diff from what the call
	// left (a/) to what is there now (b/).
	Diff string `json:"diff,omitempty"`
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	since := "the call"
	if e.CallID == "" && len(e.Calls) > 1 {
		since = "the calls"
	}
	fmt.Fprintf(&b, "cannot undo %s: %s changed since %s, so nothing was undone", callsText(e.CallID, e.Calls), files(len(e.Files)), since)
	for _, c := range e.Files {
		fmt.Fprintf(&b, "\n%s: %s", c.Path, c.Problem)
		if c.Diff != "" {
			b.WriteString("\n" + strings.TrimSuffix(c.Diff, "\n"))
		}
	}
	return b.String()
}

func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// Undo takes back the file changes of the calls callIDs recorded in
// journal — one call, or several made in that order (the calls of a
// session's turns, say), taken back together — through bridge (so the
// bridge's confinement and protected paths apply): every file gets its
// content and mode from before the first of them again — a file they
// created is deleted, one they deleted is recreated — in the reverse order
// of the changes.
//
// Undo checks first that every file is still as the last of the calls left
// it (its existence and the SHA-256 of its content), and, between calls,
// that each found the file as the one before left it — so no change made
// outside the journal (by a person, or a shell command) is lost; when one
// is not, it changes nothing and returns a [*ConflictError]. Undoing is
// all or nothing: when a write fails midway, the files already restored
// are put back as they were found. After a successful undo the calls'
// changes are deleted from the journal, so a second undo returns an error
// matching [ErrNothingToUndo].
//
// Directories the calls made stay. A recreated file gets its mode as the
// bridge creates files: a local bridge applies the process's umask. Run Undo
// while no call is changing the same files: it does not take the file
// tools' locks.
func Undo(ctx context.Context, journal Source, bridge fsbridge.Bridge, callIDs ...string) (Report, error) {
	report, conflict := Report{}, &ConflictError{}
	if len(callIDs) == 1 {
		report.CallID, conflict.CallID = callIDs[0], callIDs[0]
	}
	// Each path goes from its state after the last change to it back to
	// its state before the first.
	first, last := map[string]tool.FileChange{}, map[string]tool.FileChange{}
	lastCall := map[string]string{}
	var order []string
	for _, id := range callIDs {
		recs, err := journal.Changes(ctx, id)
		if err != nil {
			return Report{}, fmt.Errorf("reading the changes of call %s: %w", id, err)
		}
		if len(recs) > 0 && len(callIDs) > 1 {
			report.Calls, conflict.Calls = append(report.Calls, id), append(conflict.Calls, id)
		}
		for _, c := range recs {
			prev, seen := last[c.Path]
			switch {
			case !seen:
				first[c.Path] = c
				order = append(order, c.Path)
			case lastCall[c.Path] != id && !follows(prev, c):
				conflict.Files = append(conflict.Files, Conflict{Path: c.Path, Problem: fmt.Sprintf("changed between call %s and call %s by something the journal did not record (a person, or a shell command)", lastCall[c.Path], id)})
			}
			last[c.Path], lastCall[c.Path] = c, id
		}
	}
	if len(order) == 0 {
		return Report{}, fmt.Errorf("%w for %s: no file change is recorded for it (it changed no files, was undone already, or its record expired)", ErrNothingToUndo, callsText("", callIDs))
	}
	slices.Reverse(order)
	var cs []changeset.Change
	for _, p := range order {
		now, c, err := check(ctx, bridge, last[p])
		switch {
		case err != nil:
			return Report{}, fmt.Errorf("undoing %s: reading %s: %w", callsText(report.CallID, callIDs), p, err)
		case c != nil:
			conflict.Files = append(conflict.Files, *c)
			continue
		}
		f := first[p]
		cs = append(cs, changeset.Change{Path: p, Before: now, After: changeset.State{Exists: f.Existed, Data: f.Before, Mode: f.Mode}})
	}
	if len(conflict.Files) > 0 {
		return Report{}, conflict
	}
	if err := changeset.Apply(ctx, bridge, cs); err != nil {
		return Report{}, fmt.Errorf("undoing %s failed, and the files already restored were put back: %w", callsText(report.CallID, callIDs), err)
	}
	for _, c := range cs {
		switch {
		case !c.Before.Exists && !c.After.Exists:
			continue // created and deleted again by the calls
		case !c.After.Exists:
			report.Files = append(report.Files, Restored{Path: c.Path, Action: "deleted"})
		case !c.Before.Exists:
			report.Files = append(report.Files, Restored{Path: c.Path, Action: "recreated"})
		default:
			report.Files = append(report.Files, Restored{Path: c.Path, Action: "reverted"})
		}
	}
	for _, id := range callIDs {
		if err := journal.DeleteChanges(ctx, id); err != nil {
			return report, fmt.Errorf("call %s was undone, but its record could not be deleted (undoing it again would report conflicts): %w", id, err)
		}
	}
	return report, nil
}

// follows reports whether change c found its file as change prev left it.
func follows(prev, c tool.FileChange) bool {
	if prev.Exists != c.Existed {
		return false
	}
	return !c.Existed || strings.EqualFold(hash(c.Before), afterHash(prev))
}

// check returns the current state of the file c changed, or how it differs
// from the state c left it in.
func check(ctx context.Context, b fsbridge.Bridge, c tool.FileChange) (changeset.State, *Conflict, error) {
	st, err := b.Stat(ctx, c.Path)
	var now changeset.State
	switch {
	case errors.Is(err, iofs.ErrNotExist):
	case err != nil:
		return now, nil, err
	case st.IsDir():
		return now, &Conflict{Path: c.Path, Problem: "a directory is there now"}, nil
	default:
		data, err := b.ReadFile(ctx, c.Path)
		if err != nil {
			return now, nil, err
		}
		now = changeset.State{Exists: true, Data: data, Mode: st.Mode().Perm()}
	}
	switch {
	case c.Exists && !now.Exists:
		return now, &Conflict{Path: c.Path, Problem: "deleted since"}, nil
	case !c.Exists && now.Exists:
		return now, &Conflict{Path: c.Path, Problem: "created since"}, nil
	case !now.Exists || strings.EqualFold(hash(now.Data), afterHash(c)):
		return now, nil, nil
	}
	conflict := &Conflict{Path: c.Path, Problem: "changed since"}
	if strings.EqualFold(hash(c.After), afterHash(c)) {
		conflict.Diff = textdiff.Unified(textdiff.File{OldPath: c.Path, NewPath: c.Path, Before: string(c.After), After: string(now.Data)})
	} else {
		conflict.Problem += " (the content the call left is not kept, so the difference cannot be shown)"
	}
	return now, conflict, nil
}

// afterHash is the SHA-256 of the content c left, as recorded.
func afterHash(c tool.FileChange) string {
	if c.AfterSHA256 != "" {
		return c.AfterSHA256
	}
	return hash(c.After)
}

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
