package automation_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/lifecycle/lifecycletest"
	"github.com/toolbelt/toolbelt/tool"
)

// TestMain fails the package when a goroutine (the claiming loop, a run,
// a lease keeper) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ lifecycle.Service = (*automation.Scheduler)(nil)

// blockedDelivery is a Deliver that runs until released or cancelled, and
// says which.
type blockedDelivery struct {
	entered  chan struct{}
	release  chan struct{}
	returned chan error // the run context's error when the run ended
}

func (b *blockedDelivery) deliver(ctx context.Context, _ tool.Schedule) (string, error) {
	close(b.entered)
	select {
	case <-b.release:
		b.returned <- ctx.Err()
		return "done", nil
	case <-ctx.Done():
		b.returned <- ctx.Err()
		return "", ctx.Err()
	}
}

// startedWithRun starts a scheduler with a message schedule due, and
// returns once its run is in progress.
func startedWithRun(t *testing.T) (*automation.Scheduler, *blockedDelivery) {
	t.Helper()
	ctx := context.Background()
	b := &blockedDelivery{entered: make(chan struct{}), release: make(chan struct{}), returned: make(chan error, 1)}
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{Deliver: b.deliver, Poll: time.Millisecond})
	if _, err := r.sched.Add(ctx, tool.Schedule{Kind: tool.ScheduleEvery, Every: "1m", Enabled: true, Payload: tool.SchedulePayload{Text: "wake up"}}); err != nil {
		t.Fatal(err)
	}
	r.clock.set(start.Add(time.Minute + time.Second))
	if err := r.sched.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-b.entered
	return r.sched, b
}

// TestStopWaitsForRunInProgress: Stop lets a run in progress finish and
// returns after it.
func TestStopWaitsForRunInProgress(t *testing.T) {
	t.Parallel()
	s, b := startedWithRun(t)
	ctx, waiting := lifecycletest.Watched(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(ctx) }()
	<-waiting
	close(b.release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop = %v", err)
	}
	select {
	case err := <-b.returned:
		if err != nil {
			t.Errorf("the run was cancelled (%v), not let finish", err)
		}
	default:
		t.Error("Stop returned before the run in progress ended")
	}
}

// TestStopCancelsRunWhenContextEnds: once Stop's context ends, the run in
// progress is cancelled, and Stop returns after it ended.
func TestStopCancelsRunWhenContextEnds(t *testing.T) {
	t.Parallel()
	s, b := startedWithRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v, want the context's error", err)
	}
	select {
	case err := <-b.returned:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the run ended with %v, want it cancelled", err)
		}
	default:
		t.Error("Stop returned while the run it cancelled went on")
	}
}

// TestSchedulerStopTwiceAndWithoutStart: Stop is idempotent and safe
// before Start; a stopped scheduler does not start again.
func TestSchedulerStopTwiceAndWithoutStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, started := range []bool{false, true} {
		r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{})
		if started {
			if err := r.sched.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if err := r.sched.Stop(ctx); err != nil {
				t.Errorf("started %v: Stop #%d = %v", started, i+1, err)
			}
		}
		if err := r.sched.Start(ctx); err == nil {
			t.Errorf("started %v: Start after Stop succeeded", started)
		}
	}
}
