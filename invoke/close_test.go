package invoke_test

import (
	"context"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// feed is a job queue that only publishes events, and counts the
// subscriptions still open.
type feed struct {
	tool.Jobs
	mu   sync.Mutex
	subs map[chan tool.JobEvent]bool
}

func (f *feed) Subscribe(int) (<-chan tool.JobEvent, func()) {
	ch := make(chan tool.JobEvent, 1)
	f.mu.Lock()
	f.subs[ch] = true
	f.mu.Unlock()
	return ch, sync.OnceFunc(func() {
		f.mu.Lock()
		delete(f.subs, ch)
		f.mu.Unlock()
		close(ch)
	})
}

func (f *feed) open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// TestCloseReleasesJobSubscription: a runner with a job queue subscribes
// to its events; Close ends the subscription and the goroutine forwarding
// them (goleak, in TestMain, sees it go), and a second Close does nothing.
func TestCloseReleasesJobSubscription(t *testing.T) {
	t.Parallel()
	f := &feed{subs: map[chan tool.JobEvent]bool{}}
	r := newRunner(t, nil, invoke.WithJobs(f))
	if n := f.open(); n != 1 {
		t.Fatalf("%d subscriptions open, want the runner's one", n)
	}
	r.Close()
	r.Close()
	if n := f.open(); n != 0 {
		t.Errorf("%d subscriptions open after Close", n)
	}
	// Calls still run after Close.
	if msg := r.Run(context.Background(), tool.Call{ID: "c1", Name: "none", Arguments: []byte(`{}`)}); !msg.IsError {
		t.Errorf("a call of an unknown tool after Close: %+v", msg)
	}
}
