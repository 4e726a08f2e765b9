package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/lifecycle/lifecycletest"
	"github.com/toolbelt/toolbelt/tool"
)

// TestMain fails the package when a goroutine (River's, the pruner, a
// step) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ lifecycle.Service = (*jobs.Queue)(nil)

// blockingAPI is a service whose Submit runs until it is released or its
// context ends, and says which.
type blockingAPI struct {
	entered  chan struct{} // closed when Submit starts
	release  chan struct{} // closing it lets Submit return
	returned chan error    // what ended Submit: nil (released) or ctx's error
}

func newBlockingAPI() *blockingAPI {
	return &blockingAPI{entered: make(chan struct{}), release: make(chan struct{}), returned: make(chan error, 1)}
}

func (b *blockingAPI) Submit(ctx context.Context, _ tool.AsyncSubmit) (string, error) {
	close(b.entered)
	select {
	case <-b.release:
		b.returned <- nil
		return "ext", nil
	case <-ctx.Done():
		b.returned <- ctx.Err()
		return "", ctx.Err()
	}
}

func (b *blockingAPI) Poll(context.Context, string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncProcessing}, nil
}

func (b *blockingAPI) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, errors.New("no webhooks")
}

// startBlocked starts a queue in a fresh database with one job whose
// submission is under way, blocked in api.
func startBlocked(t *testing.T, api *blockingAPI) *jobs.Queue {
	t.Helper()
	vt := asyncTool("slow", tool.AsyncSpec{Type: tool.AsyncPolling}, api)
	q, err := jobs.Open(context.Background(), t.TempDir()+"/t.db", jobs.Config{Run: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Register(vt); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(context.Background(), &vt, tool.Call{ID: "call_1", Name: "slow"}, scope); err != nil {
		t.Fatal(err)
	}
	<-api.entered
	return q
}

// TestStopWaitsForStepInFlight: Stop lets a step under way finish, and
// returns after it did.
func TestStopWaitsForStepInFlight(t *testing.T) {
	t.Parallel()
	api := newBlockingAPI()
	q := startBlocked(t, api)
	ctx, waiting := lifecycletest.Watched(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- q.Stop(ctx) }()
	<-waiting
	close(api.release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop = %v", err)
	}
	select {
	case err := <-api.returned:
		if err != nil {
			t.Errorf("the step was cancelled (%v), not let finish", err)
		}
	default:
		t.Error("Stop returned before the step in flight did")
	}
}

// TestStopCancelsStepWhenContextEnds: once Stop's context ends, the step
// under way is cancelled, and Stop returns only after it returned.
func TestStopCancelsStepWhenContextEnds(t *testing.T) {
	t.Parallel()
	api := newBlockingAPI()
	q := startBlocked(t, api)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v, want the context's error: the step had to be cancelled", err)
	}
	select {
	case err := <-api.returned:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the step ended with %v, want its context cancelled", err)
		}
	default:
		t.Error("Stop returned while the step it cancelled still ran")
	}
}

// TestStopTwiceAndWithoutStart: Stop is idempotent, and safe on a queue
// that never started; a stopped queue does not start again.
func TestStopTwiceAndWithoutStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, start := range []bool{false, true} {
		q, err := jobs.Open(ctx, t.TempDir()+"/t.db", jobs.Config{Run: true})
		if err != nil {
			t.Fatal(err)
		}
		if start {
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if err := q.Stop(ctx); err != nil {
				t.Errorf("started %v: Stop #%d = %v", start, i+1, err)
			}
		}
		if err := q.Start(ctx); err == nil {
			t.Errorf("started %v: Start after Stop succeeded", start)
		}
	}
}
