// Package syncbuf is a buffer that may be written and read at once: the
// output of a logger or a child process that a test reads while it is
// being written.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it; its zero value is empty and ready.
// Its methods are safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
