package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/tool"
)

// finishing is a service whose work is done at the first poll.
type finishing struct{}

func (finishing) Submit(_ context.Context, req tool.AsyncSubmit) (string, error) {
	return "ext-" + req.TaskID, nil
}
func (finishing) Poll(_ context.Context, ext string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncCompleted, Result: json.RawMessage(`"` + ext + `"`)}, nil
}
func (finishing) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, nil
}

// queueTwo opens a queue on dsn with vt registered, not started, and
// submits two calls of vt; it returns the queue, its events and the two
// jobs.
func queueTwo(t *testing.T, dsn string, vt *tool.Tool) (*Queue, <-chan tool.JobEvent, tool.JobInfo, tool.JobInfo) {
	t.Helper()
	ctx := context.Background()
	q, err := Open(ctx, dsn, Config{Run: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(ctx) })
	if err := q.Register(*vt); err != nil {
		t.Fatal(err)
	}
	events, stop := q.Subscribe(0)
	t.Cleanup(stop)
	var jobs [2]tool.JobInfo
	for i := range jobs {
		if jobs[i], err = q.Submit(ctx, vt, tool.Call{ID: fmt.Sprintf("c%d", i+1), Name: vt.Name}, tool.Scope{Workspace: "/w"}); err != nil {
			t.Fatal(err)
		}
	}
	return q, events, jobs[0], jobs[1]
}

// awaitTwo waits for events of type typ of two jobs and returns the jobs
// as those events report them, by task id.
func awaitTwo(t *testing.T, events <-chan tool.JobEvent, typ string) map[string]tool.JobInfo {
	t.Helper()
	got := map[string]tool.JobInfo{}
	timeout := time.After(60 * time.Second)
	for len(got) < 2 {
		select {
		case e := <-events:
			if e.Type == typ {
				got[e.Job.TaskID] = e.Job
			}
		case <-timeout:
			t.Fatalf("%s events: %+v", typ, got)
		}
	}
	return got
}

// TestEarlierKindsStillWorked: jobs an earlier version queued — a
// submission job, or a submitted job's poll job — finish.
func TestEarlierKindsStillWorked(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		vt := tool.Tool{Name: "video", Description: "test", Async: &tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond}, Handler: finishing{}}
		q, events, submitted, polled := queueTwo(t, dsn, &vt)
		// What an earlier version left: River jobs of its kinds.
		if err := q.b.tx(ctx, func(qr querier, enqueue enqueueFunc) error {
			if _, err := qr.exec(ctx, "DELETE FROM river_job"); err != nil {
				return err
			}
			if _, err := qr.exec(ctx, "UPDATE async_jobs SET status = ?, external_id = ? WHERE task_id = ?", StatusProcessing, "ext-old", polled.TaskID); err != nil {
				return err
			}
			if err := enqueue(submitArgs{TaskID: submitted.TaskID}, nil); err != nil {
				return err
			}
			return enqueue(pollArgs{TaskID: polled.TaskID, IntervalMS: 10}, nil)
		}); err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		completed := awaitTwo(t, events, tool.JobCompleted)
		if string(completed[submitted.TaskID].Result) != `"ext-`+submitted.TaskID+`"` || string(completed[polled.TaskID].Result) != `"ext-old"` {
			t.Fatalf("completed = %+v", completed)
		}
	})
}

// TestLastRiverAttemptFailsTheJob: failures no step counts (here the store
// refusing to record a submission) use River's attempts; on the last one
// the job's row is finished as failed, not left pending when River
// discards the job — for a job of an earlier kind too.
func TestLastRiverAttemptFailsTheJob(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		if isPostgres(dsn) {
			t.Skip("the store failure is injected with a SQLite trigger")
		}
		vt := tool.Tool{Name: "video", Description: "test", Async: &tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond, MaxRetries: 1}, Handler: finishing{}}
		q, events, current, legacy := queueTwo(t, dsn, &vt)
		if err := q.b.tx(ctx, func(qr querier, enqueue enqueueFunc) error {
			if _, err := qr.exec(ctx, `CREATE TRIGGER refuse_processing BEFORE UPDATE ON async_jobs WHEN NEW.status = 'processing'
				BEGIN SELECT RAISE(ABORT, 'injected store failure'); END`); err != nil {
				return err
			}
			// The second job as an earlier version queued it.
			if _, err := qr.exec(ctx, "DELETE FROM river_job"); err != nil {
				return err
			}
			if err := enqueueJob(enqueue, current.TaskID, 0, vt.Async.WithDefaults()); err != nil {
				return err
			}
			return enqueue(submitArgs{TaskID: legacy.TaskID}, &river.InsertOpts{MaxAttempts: 2})
		}); err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		failed := awaitTwo(t, events, tool.JobFailed)
		for id, attempts := range map[string]string{current.TaskID: "after 4 attempts", legacy.TaskID: "after 2 attempts"} {
			if msg := failed[id].Error; !strings.Contains(msg, "injected store failure") || !strings.Contains(msg, attempts) {
				t.Errorf("job %s failed with %q, want the store's error %s", id, msg, attempts)
			}
			if j, err := q.Get(ctx, id); err != nil || j.Status != StatusFailed {
				t.Errorf("job %s = %+v, %v", id, j, err)
			}
		}
	})
}
