// Package lifecycle states the one shape every long-lived service of
// Toolbelt has: the durable job queue, the scheduler, the audit spool and
// writer, the MCP client manager, the directory-tool loader and its folder
// watchers, and the session host.
//
// The rules, which each service's doc comment refers to:
//
//   - Constructing a service starts nothing: no goroutine, no child process
//     runs before Start. (A constructor may open what the service holds — a
//     database, a file — which Stop releases.)
//   - Start's context bounds starting only (waiting for a lock, a first
//     read); the service then runs until Stop, whatever becomes of that
//     context. Start is called at most once; a service that failed to start
//     still needs its Stop to release what its constructor opened.
//   - Stop stops accepting work, lets the work in flight finish until its
//     context ends, then cancels that work; it returns only after every
//     goroutine the service started has returned. Stop is idempotent, and
//     safe when Start failed or never ran. A stopped service stays stopped.
//
// The package imports only the standard library, so that any package, the
// core included, may depend on it.
package lifecycle

import (
	"context"
	"sync"
)

// Service is a long-lived service: see the package documentation for the
// rules its two methods follow.
type Service interface {
	// Start starts the service's background work; ctx bounds starting
	// only.
	Start(ctx context.Context) error
	// Stop stops the service: work in flight has until ctx ends to finish,
	// and is then cancelled. It returns once everything the service
	// started has ended.
	Stop(ctx context.Context) error
}

// Drain is the usual end of a Stop: it waits for the work wg counts until
// ctx ends; then it calls cancel, which must make that work end, and waits
// for it again. It returns ctx's error when the work had to be cancelled.
func Drain(ctx context.Context, wg *sync.WaitGroup, cancel func()) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		cancel()
		<-done
		return ctx.Err()
	}
}
