package invoke_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// gateLog is a Gate that refuses calls once closed and notes, for each call
// it admitted, how many records the audit log held when the call left.
type gateLog struct {
	mu     sync.Mutex
	closed bool
	log    *records
	left   []int
}

func (g *gateLog) Enter() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errors.New("closing: the call was not run")
	}
	return nil
}

func (g *gateLog) Leave() {
	g.log.mu.Lock()
	n := len(g.log.list)
	g.log.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.left = append(g.left, n)
}

// TestGateSeesCallsEndAfterTheirRecord: a call leaves the gate only once
// its audit record is made (so an owner that waits for the gate can close
// the audit log), and a call the gate refuses is neither run nor audited.
func TestGateSeesCallsEndAfterTheirRecord(t *testing.T) {
	t.Parallel()
	log := &records{}
	g := &gateLog{log: log}
	ran := 0
	echo := tool.Must(tool.New("echo", "Echo.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		ran++
		return tool.Text("ok"), nil
	}))
	echo.Meta = tool.Meta{ReadOnly: true}
	r := newRunner(t, []tool.Tool{echo}, invoke.WithAudit(log), invoke.WithGate(g))
	r.Run(context.Background(), tool.Call{ID: "c1", Name: "echo", Arguments: []byte(`{}`)})
	r.Run(context.Background(), tool.Call{ID: "c2", Name: "nope", Arguments: []byte(`{}`)})
	if want := []int{1, 2}; !slices.Equal(g.left, want) {
		t.Errorf("records when each call left the gate = %v, want %v", g.left, want)
	}
	g.closed = true
	msg := r.Run(context.Background(), tool.Call{ID: "c3", Name: "echo", Arguments: []byte(`{}`)})
	if !msg.IsError || !strings.Contains(text(msg), "closing: the call was not run") {
		t.Errorf("a call the gate refuses = %+v, want its reason", msg)
	}
	if ran != 1 || len(log.list) != 2 {
		t.Errorf("after a refused call: the tool ran %d times and %d records were made, want 1 and 2", ran, len(log.list))
	}
}
