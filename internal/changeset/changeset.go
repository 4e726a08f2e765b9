// Package changeset applies a set of file changes through a file bridge, all
// of them or none, and shows them as a git-style diff. The file tools use it
// to carry out a call and to describe it beforehand (a dry run, a person's
// confirmation), and undo uses it to take a call's changes back.
//
//	cs := []changeset.Change{{
//		Path:   "notes.txt",
//		Before: changeset.State{Exists: true, Data: old, Mode: 0o644},
//		After:  changeset.State{Exists: true, Data: new},
//	}}
//	fmt.Print(changeset.Diff(cs))
//	err := changeset.Apply(ctx, bridge, cs)
package changeset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/textdiff"
)

// State is a file's state at one time.
type State struct {
	// Exists says there is a file; Data is its content then.
	Exists bool
	Data   []byte
	// Mode is its permission bits; for a file a change creates, the bits
	// it is created with (a file system may mask some, as a umask does).
	Mode fs.FileMode
}

// Change takes the file at Path from Before to After. A move is two
// changes: the old path removed and the new one created.
type Change struct {
	// Path is slash-separated, relative to the bridge's root.
	Path string
	// From is, for a file moved here, the path it was moved from (whose own
	// change removes it); it only makes [Diff] show a rename.
	From          string
	Before, After State
}

// StepError is the failure of one step of [Apply]: Err happened while
// bringing the file at Path to its new state.
type StepError struct {
	Path string
	Err  error
	// Unrestored, when not nil, says why a file already changed could not
	// be put back: the change is left half made.
	Unrestored error
}

func (e *StepError) Error() string { return fmt.Sprintf("changing %s: %v", e.Path, e.Err) }

// Unwrap returns the bridge's error.
func (e *StepError) Unwrap() error { return e.Err }

// Apply brings every file to its After state through b: files written first,
// then files removed, so that a move never loses its file; missing parent
// directories are made. When a step fails, every file already changed is
// put back as it was (Before) and the directories made are removed, and
// Apply returns a [*StepError] (whose Unrestored says when a file could not
// be put back). Changes that leave no file before or after are skipped;
// the paths must be distinct.
func Apply(ctx context.Context, b fsbridge.Bridge, cs []Change) error {
	var done []func(context.Context) error // how to undo each step, in the order done
	for _, removing := range []bool{false, true} {
		for _, c := range cs {
			if c.After.Exists == removing || !c.Before.Exists && !c.After.Exists {
				continue
			}
			steps, err := put(ctx, b, c)
			done = append(done, steps...)
			if err != nil {
				back := context.WithoutCancel(ctx)
				var unrestored []error
				for i := len(done) - 1; i >= 0; i-- {
					if err := done[i](back); err != nil {
						unrestored = append(unrestored, err)
					}
				}
				return &StepError{Path: c.Path, Err: err, Unrestored: errors.Join(unrestored...)}
			}
		}
	}
	return nil
}

// put brings one file to its After state and returns how to undo it.
func put(ctx context.Context, b fsbridge.Bridge, c Change) ([]func(context.Context) error, error) {
	restore := func(ctx context.Context) error {
		if c.Before.Exists {
			return b.WriteFile(ctx, c.Path, c.Before.Data, c.Before.Mode)
		}
		if err := b.Remove(ctx, c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if !c.After.Exists {
		if err := b.Remove(ctx, c.Path); err != nil {
			return nil, err
		}
		return []func(context.Context) error{restore}, nil
	}
	var undo []func(context.Context) error
	made, err := mkdirs(ctx, b, path.Dir(c.Path))
	for _, dir := range made { // undone last to first: innermost first
		undo = append(undo, func(ctx context.Context) error {
			_ = b.Remove(ctx, dir) // a directory left behind changes no file
			return nil
		})
	}
	if err != nil {
		return undo, err
	}
	if err := b.WriteFile(ctx, c.Path, c.After.Data, c.After.Mode); err != nil {
		return undo, err
	}
	return append(undo, restore), nil
}

// mkdirs makes the directory dir and its missing parents, and returns the
// ones it made, outermost first.
func mkdirs(ctx context.Context, b fsbridge.Bridge, dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := b.Stat(ctx, d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	slices.Reverse(missing)
	if err := b.MkdirAll(ctx, dir); err != nil {
		return nil, err
	}
	return missing, nil
}

// Diff returns the changes as a git-style unified diff (see [textdiff]):
// created files as new, removed ones as deleted, and a file moved (a created
// file whose From is removed in cs) as a rename.
func Diff(cs []Change) string {
	removed := map[string]Change{}
	for _, c := range cs {
		if c.Before.Exists && !c.After.Exists {
			removed[c.Path] = c
		}
	}
	// A move: the created file's source, and the source's change, shown once.
	source, shown := map[string]Change{}, map[string]bool{}
	for _, c := range cs {
		if src, ok := removed[c.From]; ok && !c.Before.Exists && c.After.Exists {
			source[c.Path], shown[src.Path] = src, true
		}
	}
	var files []textdiff.File
	for _, c := range cs {
		f := textdiff.File{Before: string(c.Before.Data), After: string(c.After.Data)}
		src, moved := source[c.Path]
		switch {
		case shown[c.Path] || !c.Before.Exists && !c.After.Exists:
			continue
		case moved:
			f.OldPath, f.NewPath, f.Before = src.Path, c.Path, string(src.Before.Data)
		case !c.Before.Exists:
			f.NewPath, f.Mode = c.Path, c.After.Mode
		case !c.After.Exists:
			f.OldPath, f.Mode = c.Path, c.Before.Mode
		default:
			f.OldPath, f.NewPath = c.Path, c.Path
		}
		files = append(files, f)
	}
	return textdiff.Unified(files...)
}

// Outcomes of [Assess].
const (
	// Kept: every file the change reached is as the change left it.
	Kept = "kept"
	// RolledBack: the files the change had changed are put back as they
	// were.
	RolledBack = "rolled back"
	// NotMade: every file is as it was before: the change never began.
	NotMade = "not made"
	// LeftAlone: every file was changed since by something else.
	LeftAlone = "left alone"
)

// Settlement is how a change that [Apply] may have left half made is made
// whole: what [Assess] found, and what [Settle] does.
type Settlement struct {
	// Outcome is Kept, RolledBack, NotMade or LeftAlone.
	Outcome string `json:"outcome"`
	// Files are the change's files, in its order.
	Files []Settled `json:"files"`
}

// Settled is one file of a settled change.
type Settled struct {
	Path string `json:"path"`
	// Found is the state the file was found in: "before", "after", or
	// "neither" (changed since by something else: left as it is).
	Found string `json:"found"`
	// Restored says the file is put back as it was before.
	Restored bool `json:"restored,omitempty"`
}

// Assess finds the state of a change that [Apply] may have left half made
// — the process killed between two files — and decides how to make it
// whole, without changing anything: when no file is in its Before state,
// the change stands (Kept); otherwise every file in its After state is to
// be put back (RolledBack). A file in neither state was changed since by
// something else and is left as it is. Existence and content are
// compared, not modes.
func Assess(ctx context.Context, b fsbridge.Bridge, cs []Change) (Settlement, error) {
	s := Settlement{Files: make([]Settled, len(cs))}
	before, after := 0, 0
	for i, c := range cs {
		now, err := stateOf(ctx, b, c.Path)
		if err != nil {
			return Settlement{}, fmt.Errorf("reading %s: %w", c.Path, err)
		}
		s.Files[i] = Settled{Path: c.Path, Found: "neither"}
		switch {
		case same(now, c.After):
			s.Files[i].Found = "after"
			after++
		case same(now, c.Before):
			s.Files[i].Found = "before"
			before++
		}
	}
	switch {
	case before == 0 && after > 0:
		s.Outcome = Kept
	case after == 0 && before > 0:
		s.Outcome = NotMade
	case after == 0:
		s.Outcome = LeftAlone
	default:
		s.Outcome = RolledBack
		for i := range s.Files {
			s.Files[i].Restored = s.Files[i].Found == "after"
		}
	}
	return s, nil
}

// Settle carries out s, which [Assess] made of cs: it puts back the files
// s says to restore, each with one write or removal through b (a write is
// atomic with a local bridge), files written back before files removed,
// so that a move never loses its file. Each file is read again just
// before: one that is no longer as the change left it (already put back,
// or changed since by something else) is left as it is. Settle is
// idempotent: cut short itself, it is run again and finishes the job.
// Directories the change made stay.
func Settle(ctx context.Context, b fsbridge.Bridge, cs []Change, s Settlement) error {
	for _, removing := range []bool{false, true} {
		for i, c := range cs {
			if i >= len(s.Files) || !s.Files[i].Restored || c.Before.Exists == removing {
				continue
			}
			now, err := stateOf(ctx, b, c.Path)
			if err != nil {
				return fmt.Errorf("reading %s: %w", c.Path, err)
			}
			if !same(now, c.After) {
				continue
			}
			if err := restore(ctx, b, c); err != nil {
				return fmt.Errorf("putting back %s: %w", c.Path, err)
			}
		}
	}
	return nil
}

// restore brings the file c changed back to its Before state.
func restore(ctx context.Context, b fsbridge.Bridge, c Change) error {
	if !c.Before.Exists {
		if err := b.Remove(ctx, c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if _, err := mkdirs(ctx, b, path.Dir(c.Path)); err != nil {
		return err
	}
	return b.WriteFile(ctx, c.Path, c.Before.Data, c.Before.Mode)
}

// stateOf returns the state of the file at p; a directory there is in no
// state a change leaves.
func stateOf(ctx context.Context, b fsbridge.Bridge, p string) (State, error) {
	st, err := b.Stat(ctx, p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fsbridge.ErrNotDir):
		return State{}, nil
	case err != nil:
		return State{}, err
	case st.IsDir():
		return State{Exists: true, Mode: fs.ModeDir}, nil
	}
	data, err := b.ReadFile(ctx, p)
	if err != nil {
		return State{}, err
	}
	return State{Exists: true, Data: data, Mode: st.Mode().Perm()}, nil
}

// same says a file in state now is in state want: both absent, or both
// regular files with the same content.
func same(now, want State) bool {
	return now.Exists == want.Exists && now.Mode&fs.ModeDir == 0 && bytes.Equal(now.Data, want.Data)
}
