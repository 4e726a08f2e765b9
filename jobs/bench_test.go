package jobs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

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

func benchDSNs(b *testing.B, f func(b *testing.B, dsn func() string)) {
	b.Run("sqlite", func(b *testing.B) {
		f(b, func() string { return filepath.Join(b.TempDir(), "bench.db") })
	})
	b.Run("postgres", func(b *testing.B) {
		storetest.Postgres(b) // skips without PostgreSQL
		f(b, func() string { return storetest.Postgres(b) })
	})
}

// BenchmarkSubmit measures recording a job and enqueueing it (what an
// async call adds to the pipeline), with p50 and p99.
func BenchmarkSubmit(b *testing.B) {
	benchDSNs(b, func(b *testing.B, dsn func() string) {
		ctx := context.Background()
		q, err := jobs.Open(ctx, dsn(), jobs.Config{Logger: quietLog})
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

// benchWorkers is the worker count of the drain benchmarks: the queue's
// default, or TOOLBELT_BENCH_JOBS_WORKERS.
func benchWorkers(b *testing.B) int {
	return benchEnvInt(b, "TOOLBELT_BENCH_JOBS_WORKERS", jobs.DefaultWorkers)
}

// benchFetch is River's fetch cooldown and poll interval in the drain
// benchmarks, for the queue and the floor alike: the queue's defaults, or
// TOOLBELT_BENCH_JOBS_COOLDOWN_MS and TOOLBELT_BENCH_JOBS_POLL_MS.
func benchFetch(b *testing.B) (cooldown, poll time.Duration) {
	return time.Duration(benchEnvInt(b, "TOOLBELT_BENCH_JOBS_COOLDOWN_MS", int(jobs.DefaultFetchCooldown.Milliseconds()))) * time.Millisecond,
		time.Duration(benchEnvInt(b, "TOOLBELT_BENCH_JOBS_POLL_MS", int(jobs.DefaultFetchPollInterval.Milliseconds()))) * time.Millisecond
}

func benchEnvInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// drained is one drain: how long it took from the start of the workers to
// the last completion, the process's CPU time (user + system) in that
// span, and when each thousandth job completed.
type drained struct {
	n         int
	wall, cpu time.Duration
	marks     []time.Duration // at 1,000, 2,000, … completions
}

func (d drained) rate() float64            { return float64(d.n) / d.wall.Seconds() }
func (d drained) cpuPerJob() time.Duration { return d.cpu / time.Duration(d.n) }

// thousands returns how long each thousand jobs took to drain.
func (d drained) thousands() []time.Duration {
	out := make([]time.Duration, len(d.marks))
	var prev time.Duration
	for i, m := range d.marks {
		out[i], prev = m-prev, m
	}
	return out
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clock measures a drain: start is called when the workers start, done
// once per completed job.
type clock struct {
	b        *testing.B
	t0       time.Time
	cpu0     time.Duration
	finished int
	d        drained
}

func (c *clock) start() { c.t0, c.cpu0 = time.Now(), processCPU(c.b) }

func (c *clock) done() bool {
	c.finished++
	if c.finished%1000 == 0 {
		c.d.marks = append(c.d.marks, time.Since(c.t0))
	}
	if c.finished < c.d.n {
		return false
	}
	c.d.wall, c.d.cpu = time.Since(c.t0), processCPU(c.b)-c.cpu0
	return true
}

// drainQueue queues n jobs of a polling tool whose work is done at its
// first poll, with no worker running, then starts the queue and measures
// until the last completion event.
func drainQueue(b *testing.B, dsn string, n, workers int) drained {
	ctx := context.Background()
	h := &done{}
	vt := tool.Tool{Name: "video", Async: &tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: time.Millisecond}, Handler: h}
	cooldown, poll := benchFetch(b)
	q, err := jobs.Open(ctx, dsn, jobs.Config{Run: true, Workers: workers, FetchCooldown: cooldown, FetchPollInterval: poll, Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Stop(ctx)
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
	defer stop()
	c := &clock{b: b, d: drained{n: n}}
	runtime.GC()
	c.start()
	if err := q.Start(ctx); err != nil {
		b.Fatal(err)
	}
	for e := range events {
		if e.Type == tool.JobCompleted && c.done() {
			break
		}
	}
	return c.d
}

// noop is the floor's job: one River job whose work is nothing.
type noop struct{}

func (noop) Kind() string { return "bench_noop" }

// drainRiver is the floor: bare River (its own driver on a plain
// connection, as River's documentation opens it, with the queue's
// pragmas), n one-step jobs inserted with no worker running, then the
// client started and measured until the last completion.
func drainRiver(b *testing.B, dsn string, n, workers int) drained {
	ctx := context.Background()
	ws := river.NewWorkers()
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[noop]) error { return nil }))
	cooldown, poll := benchFetch(b)
	cfg := &river.Config{
		Logger:            quietLog,
		FetchCooldown:     cooldown,
		FetchPollInterval: poll,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:           ws,
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noop{}}
	}
	var r floorClient
	if strings.HasPrefix(dsn, "postgres") {
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		r = newFloorClient(b, riverpgxv5.New(pool), cfg, params)
	} else {
		db, err := sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		r = newFloorClient(b, riversqlite.New(db), cfg, params)
	}
	events, cancel := r.subscribe()
	defer cancel()
	c := &clock{b: b, d: drained{n: n}}
	runtime.GC()
	c.start()
	if err := r.start(ctx); err != nil {
		b.Fatal(err)
	}
	defer r.stop(ctx)
	for range events {
		if c.done() {
			break
		}
	}
	return c.d
}

// floorClient is the floor's River client, whichever its driver.
type floorClient struct {
	start, stop func(context.Context) error
	subscribe   func() (<-chan *river.Event, func()) // to completions
}

// newFloorClient migrates driver's database, opens a River client on it
// with cfg and inserts params, without starting it.
func newFloorClient[TTx any](b *testing.B, driver riverdriver.Driver[TTx], cfg *river.Config, params []river.InsertManyParams) floorClient {
	ctx := context.Background()
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		b.Fatal(err)
	}
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for p := range slices.Chunk(params, 1000) {
		if _, err := c.InsertMany(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	return floorClient{c.Start, c.Stop, func() (<-chan *river.Event, func()) { return c.Subscribe(river.EventKindJobCompleted) }}
}

// BenchmarkDrain queues 10,000 jobs with no worker running, then starts
// the queue and measures how fast they are all completed, and how long
// each thousand took (a cliff shows as a late thousand much slower than
// the first).
func BenchmarkDrain(b *testing.B) {
	const n = 10_000
	benchDSNs(b, func(b *testing.B, dsn func() string) {
		workers := benchWorkers(b)
		for b.Loop() {
			b.StopTimer()
			d := drainQueue(b, dsn(), n, workers)
			b.ReportMetric(d.rate(), "jobs/s")
			b.ReportMetric(float64(d.cpuPerJob().Microseconds()), "cpu-µs/job")
			th := d.thousands()
			b.ReportMetric(float64(slices.Max(th[1:]))/float64(th[0]), "slowest/first-1000")
			b.Logf("workers %d: %d jobs in %v (%.0f jobs/s, %v CPU/job); per 1,000: %v", workers, n, d.wall.Round(time.Millisecond), d.rate(), d.cpuPerJob().Round(time.Microsecond), roundAll(th))
			b.StartTimer()
		}
	})
}

// BenchmarkDrainVsRiver drains 5,000 jobs through the queue and 5,000
// one-step jobs through bare River (the floor), same database kind, same
// worker count, in rounds that alternate which goes first (-benchtime Nx
// for N rounds); it reports both sides' medians and their ratios.
func BenchmarkDrainVsRiver(b *testing.B) {
	const n = 5_000
	benchDSNs(b, func(b *testing.B, dsn func() string) {
		workers := benchWorkers(b)
		var ours, floor []drained
		round := 0
		for b.Loop() {
			b.StopTimer()
			sides := []func(){
				func() { ours = append(ours, drainQueue(b, dsn(), n, workers)) },
				func() { floor = append(floor, drainRiver(b, dsn(), n, workers)) },
			}
			if round%2 == 1 {
				slices.Reverse(sides)
			}
			for _, f := range sides {
				f()
			}
			o, f := ours[len(ours)-1], floor[len(floor)-1]
			cooldown, poll := benchFetch(b)
			b.Logf("round %d, workers %d, fetch cooldown %v, poll %v: toolbelt %.0f jobs/s %v CPU/job; river %.0f jobs/s %v CPU/job", round, workers,
				cooldown, poll, o.rate(), o.cpuPerJob().Round(time.Microsecond), f.rate(), f.cpuPerJob().Round(time.Microsecond))
			round++
			b.StartTimer()
		}
		or, fr := median(ours, drained.rate), median(floor, drained.rate)
		oc := median(ours, func(d drained) float64 { return float64(d.cpuPerJob().Microseconds()) })
		fc := median(floor, func(d drained) float64 { return float64(d.cpuPerJob().Microseconds()) })
		b.ReportMetric(or, "toolbelt-jobs/s")
		b.ReportMetric(fr, "river-jobs/s")
		b.ReportMetric(or/fr, "rate-ratio")
		b.ReportMetric(oc, "toolbelt-cpu-µs/job")
		b.ReportMetric(fc, "river-cpu-µs/job")
		b.ReportMetric(oc/fc, "cpu-ratio")
	})
}

func median(ds []drained, f func(drained) float64) float64 {
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = f(d)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func roundAll(ds []time.Duration) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprint(d.Round(10 * time.Millisecond))
	}
	return s
}
