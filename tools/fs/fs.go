// Package fs provides the file tools — read, write, edit, apply_patch, ls,
// find and grep — for the catalog's "fs" section. They reach files only
// through the tool context's file bridge ([tool.Context].FS), which confines
// them to the workspace and refuses protected paths; a context without a
// bridge makes them unavailable, with the reason.
//
// Every result is capped, and says so when it is; every failure a model can
// fix is an [tool.InputError] that names the problem and the next step.
//
// A tool context that carries [Reads] ([ReadsService]) holds its sessions
// to read before edit: edit, apply_patch's updates and write over an
// existing file are refused unless the session has seen the file's
// current content (read it, or written it itself).
//
// write, edit and apply_patch first work out, with the files locked, every
// file's state after the call. The call then makes the changes, all or
// nothing, and records each one (state before and after) in the tool
// context's journal ([tool.Context].Journal), so package undo can take it
// back. A journal that keeps intents ([tool.IntentJournal], the store's)
// keeps them all before the first file changes, so that a change cut
// short by a killed process is completed or rolled back, and recorded,
// when Toolbelt next starts; when it cannot keep them, no file changes and
// the result says why. With another journal each change is recorded once
// made; if recording fails, the change stays, the error is logged and the
// result says it cannot be undone. Their Preview describes the same plan
// without writing anything: a summary, a git-style unified diff and the
// files changed, or the error the call would fail with.
package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Register adds the file tools to reg as factories that need a file bridge.
// The tools registered together share one set of per-file locks, so edits
// to one file through them are serialized.
func Register(reg *registry.Registry) error {
	s := &set{locks: newLocks()}
	for _, def := range s.defs() {
		t, err := def.build()
		if err != nil {
			return err
		}
		m := def.meta
		m.ID, m.Label, m.Description = t.Name, def.label, t.Description
		m.Source = tool.SourceCore
		m.Capabilities.WorkspaceOnly = true
		if err := reg.RegisterFactory(factory(t), m); err != nil {
			return err
		}
	}
	return nil
}

// set is the state the file tools of one registration share.
type set struct {
	locks *locks
}

// def is one tool's definition.
type def struct {
	label string
	meta  tool.Meta
	build func() (tool.Tool, error)
}

func (s *set) defs() []def {
	return []def{
		{"Read File", tool.Meta{ReadOnly: true, Timeout: 30 * time.Second}, s.readTool},
		{"Write File", tool.Meta{Destructive: true, Idempotent: true, Timeout: 30 * time.Second}, s.writeTool},
		{"Edit File", tool.Meta{Destructive: true, Timeout: 30 * time.Second}, s.editTool},
		{"Apply Patch", tool.Meta{Destructive: true, Timeout: 60 * time.Second, Settings: &PatchConfig{}, SettingsKey: PatchConfigKey}, s.patchTool},
		{"List Directory", tool.Meta{ReadOnly: true, Timeout: 30 * time.Second}, s.lsTool},
		{"Find Files", tool.Meta{ReadOnly: true, Timeout: 60 * time.Second}, s.findTool},
		{"Search File Contents", tool.Meta{ReadOnly: true, Timeout: 60 * time.Second}, s.grepTool},
	}
}

// factory makes t available in contexts that have a file bridge.
func factory(t tool.Tool) registry.Factory {
	return func(tc *tool.Context) (*tool.Tool, error) {
		if err := needBridge(tc); err != nil {
			return nil, err
		}
		made := t
		return &made, nil
	}
}

// needBridge explains why a context cannot run file tools, or returns nil.
func needBridge(tc *tool.Context) error {
	switch {
	case tc != nil && tc.FS != nil:
		return nil
	case tc == nil || tc.Workspace == "":
		return errors.New("fs tools need a workspace: no workspace directory is set")
	}
	st, err := os.Stat(tc.Workspace)
	switch {
	case err != nil:
		return fmt.Errorf("fs tools need a workspace: %w", err)
	case !st.IsDir():
		return fmt.Errorf("fs tools need a workspace: %s is not a directory", tc.Workspace)
	}
	return fmt.Errorf("fs tools need a workspace: no file bridge is open on %s", tc.Workspace)
}

// bridge returns the call's file bridge.
func bridge(inv tool.Invocation) (fsbridge.Bridge, error) {
	if err := needBridge(inv.Context); err != nil {
		return nil, err
	}
	return inv.Context.FS, nil
}

// problem turns an error from the bridge about path p into what the model
// sees: refusals and mistakes become input errors that say what to do next;
// anything else (a cancelled context, a failing disk) stays a Go error.
func problem(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, fsbridge.ErrRefused):
		return &tool.InputError{Message: capitalize(err.Error()) + "."}
	case errors.Is(err, iofs.ErrNotExist):
		return tool.InputErrorf("%s does not exist. Paths are relative to the workspace root; use ls or find to locate the file.", p)
	case errors.Is(err, fsbridge.ErrIsDir):
		return tool.InputErrorf("%s is a directory, not a file. Use ls to see what it holds.", p)
	case errors.Is(err, fsbridge.ErrNotDir):
		return tool.InputErrorf("A part of %s that should be a directory is a file. Use ls to check the path.", p)
	case errors.Is(err, iofs.ErrPermission):
		return tool.InputErrorf("%s cannot be accessed: permission denied. Choose another file.", p)
	}
	return err
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// locks serializes changes to one file: a lock per canonical path, held by
// the tool set, not by the process.
type locks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	held  chan struct{} // holds one token while the lock is taken
	users int           // callers holding or waiting
}

func newLocks() *locks { return &locks{m: map[string]*pathLock{}} }

// lock locks the files at the canonical paths keys (in sorted order, so two
// callers never wait for each other) and returns the function that unlocks
// them. It gives up when ctx ends.
func (ls *locks) lock(ctx context.Context, keys ...string) (func(), error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	var held []*pathLock
	unlock := func() {
		for i := len(held) - 1; i >= 0; i-- {
			<-held[i].held
			ls.leave(keys[i], held[i])
		}
	}
	for _, k := range keys {
		ls.mu.Lock()
		l := ls.m[k]
		if l == nil {
			l = &pathLock{held: make(chan struct{}, 1)}
			ls.m[k] = l
		}
		l.users++
		ls.mu.Unlock()
		select {
		case l.held <- struct{}{}:
			held = append(held, l)
		case <-ctx.Done():
			ls.leave(k, l)
			unlock()
			return nil, ctx.Err()
		}
	}
	return unlock, nil
}

// leave drops a caller of the lock for key, forgetting the lock when it
// was the last.
func (ls *locks) leave(key string, l *pathLock) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l.users--; l.users == 0 {
		delete(ls.m, key)
	}
}

// lockedBridge returns the call's bridge with the files the paths name
// locked, and the function that unlocks them.
func (s *set) lockedBridge(ctx context.Context, inv tool.Invocation, paths ...string) (fsbridge.Bridge, func(), error) {
	b, err := bridge(inv)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := s.lockFiles(ctx, b, paths...)
	if err != nil {
		return nil, nil, err
	}
	return b, unlock, nil
}

// lockFiles locks the files the paths name in bridge b, keyed by their
// canonical form.
func (s *set) lockFiles(ctx context.Context, b fsbridge.Bridge, paths ...string) (func(), error) {
	keys := make([]string, 0, len(paths))
	for _, p := range paths {
		canon, err := b.Resolve(ctx, p)
		if err != nil {
			return nil, problem(p, err)
		}
		keys = append(keys, b.Root()+"\x00"+canon)
	}
	return s.locks.lock(ctx, keys...)
}
