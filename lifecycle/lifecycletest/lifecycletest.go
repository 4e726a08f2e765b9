// Package lifecycletest helps test services that follow the
// [github.com/toolbelt/toolbelt/lifecycle.Service] rules.
package lifecycletest

import (
	"context"
	"sync"
)

// Watched returns a context of parent's and a channel closed the first time
// its Done is asked for. A Stop asks once it waits for the work in flight,
// so a test that waits for the channel knows Stop has stopped accepting
// work and is waiting — without sleeping.
func Watched(parent context.Context) (context.Context, <-chan struct{}) {
	w := &watched{Context: parent, asked: make(chan struct{})}
	return w, w.asked
}

type watched struct {
	context.Context
	asked chan struct{}
	once  sync.Once
}

func (w *watched) Done() <-chan struct{} {
	w.once.Do(func() { close(w.asked) })
	return w.Context.Done()
}
