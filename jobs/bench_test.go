package jobs_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/tool"
)

// done is an async handler whose work is done at the first poll.
type done struct{ polls atomic.Int64 }

func (*done) Submit(_ context.Context, req tool.AsyncSubmit) (string, error) { return req.TaskID, nil }
func (d *done) Poll(context.Context, string) (tool.AsyncStatus, error) {
	d.polls.Add(1)
	return tool.AsyncStatus{Status: tool.AsyncCompleted, Result: json.RawMessage(`"ok"`)}, nil
}
func (*done) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, nil
}

// quietLog drops the queue's per-job lines.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func benchDSNs(b *testing.B, f func(b *testing.B, dsn string)) {
	b.Run("sqlite", func(b *testing.B) { f(b, filepath.Join(b.TempDir(), "bench.db")) })
	b.Run("postgres", func(b *testing.B) { f(b, storetest.Postgres(b)) })
}

// BenchmarkSubmit measures recording a job and enqueueing its submission
// (what an async call adds to the pipeline), with p50 and p99.
func BenchmarkSubmit(b *testing.B) {
	benchDSNs(b, func(b *testing.B, dsn string) {
		ctx := context.Background()
		q, err := jobs.Open(ctx, dsn, jobs.Config{Logger: quietLog})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Stop(ctx)
		vt := tool.Tool{Name: "video", Async: &tool.AsyncSpec{Type: tool.AsyncPolling}, Handler: &done{}}
		call := tool.Call{ID: "c", Name: "video", Arguments: json.RawMessage(`{"prompt":"x"}`)}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for b.Loop() {
			t0 := time.Now()
			if _, err := q.Submit(ctx, &vt, call, tool.Scope{Workspace: "/w", Session: "s"}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	})
}

// BenchmarkDrain queues 10,000 jobs with no worker running, then starts
// the queue and measures how fast they are all completed (a submit and a
// poll step each).
func BenchmarkDrain(b *testing.B) {
	const n = 10_000
	benchDSNs(b, func(b *testing.B, dsn string) {
		for b.Loop() {
			b.StopTimer()
			ctx := context.Background()
			h := &done{}
			vt := tool.Tool{Name: "video", Async: &tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: time.Millisecond}, Handler: h}
			q, err := jobs.Open(ctx, dsn, jobs.Config{Run: true, Workers: 50, Logger: quietLog})
			if err != nil {
				b.Fatal(err)
			}
			if err := q.Register(vt); err != nil {
				b.Fatal(err)
			}
			call := tool.Call{ID: "c", Name: "video"}
			for range n {
				if _, err := q.Submit(ctx, &vt, call, tool.Scope{Workspace: "/w", Session: "drain"}); err != nil {
					b.Fatal(err)
				}
			}
			events, stop := q.Subscribe(n * 4)
			b.StartTimer()
			t0 := time.Now()
			if err := q.Start(ctx); err != nil {
				b.Fatal(err)
			}
			for finished := 0; finished < n; {
				e := <-events
				if e.Type == tool.JobCompleted {
					finished++
				}
			}
			elapsed := time.Since(t0)
			b.StopTimer()
			b.ReportMetric(n/elapsed.Seconds(), "jobs/s")
			stop()
			q.Stop(ctx)
			b.StartTimer()
		}
	})
}
