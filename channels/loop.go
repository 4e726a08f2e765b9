package channels

import (
	"context"
	"sync"
)

// loop is the goroutine an adapter runs from Start until Stop: the polling
// of Telegram, Discord's Gateway connection, the IMAP inbox.
type loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs fn in a goroutine. Its context outlives ctx (Start's context
// bounds starting only) and ends at stop.
func (l *loop) start(ctx context.Context, fn func(context.Context)) {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	l.mu.Lock()
	l.cancel, l.done = cancel, done
	l.mu.Unlock()
	go func() {
		defer close(done)
		fn(run)
	}()
}

// stop ends the goroutine and waits for it until ctx ends; it does nothing
// when no goroutine runs.
func (l *loop) stop(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
