package undo

import (
	"bytes"
	"context"
	"sync"

	"github.com/toolbelt/toolbelt/tool"
)

// MemoryJournal keeps the file changes of calls in memory: a [tool.Journal]
// for the file tools and a [Source] for [Undo], for tests and for programs
// that need undo only while they run. The zero value is ready to use; it is
// safe for concurrent use.
type MemoryJournal struct {
	mu    sync.Mutex
	calls map[string][]tool.FileChange
}

var (
	_ tool.Journal = (*MemoryJournal)(nil)
	_ Source       = (*MemoryJournal)(nil)
)

// Record implements [tool.Journal]: it keeps a copy of c.
func (j *MemoryJournal) Record(_ context.Context, callID string, c tool.FileChange) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.calls == nil {
		j.calls = map[string][]tool.FileChange{}
	}
	j.calls[callID] = append(j.calls[callID], clone(c))
	return nil
}

// Changes implements [Source]: copies of the call's changes, in the order
// recorded.
func (j *MemoryJournal) Changes(_ context.Context, callID string) ([]tool.FileChange, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]tool.FileChange, 0, len(j.calls[callID]))
	for _, c := range j.calls[callID] {
		out = append(out, clone(c))
	}
	return out, nil
}

// DeleteChanges implements [Source].
func (j *MemoryJournal) DeleteChanges(_ context.Context, callID string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.calls, callID)
	return nil
}

func clone(c tool.FileChange) tool.FileChange {
	c.Before, c.After = bytes.Clone(c.Before), bytes.Clone(c.After)
	return c
}
