package jobs

import (
	"context"
	"encoding/json"
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

// TestEarlierKindsStillWorked: jobs an earlier version queued — a
// submission job, or a submitted job's poll job — finish.
func TestEarlierKindsStillWorked(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		vt := tool.Tool{Name: "video", Description: "test", Async: &tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond}, Handler: finishing{}}
		q, err := Open(ctx, dsn, Config{Run: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop(ctx)
		if err := q.Register(vt); err != nil {
			t.Fatal(err)
		}
		events, stop := q.Subscribe(0)
		defer stop()
		submitted, err := q.Submit(ctx, &vt, tool.Call{ID: "c1", Name: "video"}, tool.Scope{Workspace: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		polled, err := q.Submit(ctx, &vt, tool.Call{ID: "c2", Name: "video"}, tool.Scope{Workspace: "/w"})
		if err != nil {
			t.Fatal(err)
		}
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
		results := map[string]string{}
		timeout := time.After(60 * time.Second)
		for len(results) < 2 {
			select {
			case e := <-events:
				if e.Type == tool.JobCompleted {
					results[e.Job.TaskID] = string(e.Job.Result)
				}
			case <-timeout:
				t.Fatalf("completed: %v", results)
			}
		}
		if results[submitted.TaskID] != `"ext-`+submitted.TaskID+`"` || results[polled.TaskID] != `"ext-old"` {
			t.Fatalf("results = %v", results)
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
		q, err := Open(ctx, dsn, Config{Run: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop(ctx)
		if err := q.Register(vt); err != nil {
			t.Fatal(err)
		}
		events, stop := q.Subscribe(0)
		defer stop()
		current, err := q.Submit(ctx, &vt, tool.Call{ID: "c1", Name: "video"}, tool.Scope{Workspace: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := q.Submit(ctx, &vt, tool.Call{ID: "c2", Name: "video"}, tool.Scope{Workspace: "/w"})
		if err != nil {
			t.Fatal(err)
		}
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
		failed := map[string]string{}
		timeout := time.After(60 * time.Second)
		for len(failed) < 2 {
			select {
			case e := <-events:
				if e.Type == tool.JobFailed {
					failed[e.Job.TaskID] = e.Job.Error
				}
			case <-timeout:
				t.Fatalf("failed: %v", failed)
			}
		}
		for id, attempts := range map[string]string{current.TaskID: "after 4 attempts", legacy.TaskID: "after 2 attempts"} {
			if msg := failed[id]; !strings.Contains(msg, "injected store failure") || !strings.Contains(msg, attempts) {
				t.Errorf("job %s failed with %q, want the store's error %s", id, msg, attempts)
			}
			if j, err := q.Get(ctx, id); err != nil || j.Status != StatusFailed {
				t.Errorf("job %s = %+v, %v", id, j, err)
			}
		}
	})
}
