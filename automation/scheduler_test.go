package automation_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/cron"
)

// clock is a settable time for the scheduler.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// audits keeps the audit records of the calls.
type audits struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (a *audits) Append(_ context.Context, r audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return nil
}

// rig is a scheduler over a real store with a pipeline holding the cron
// tool and an echo tool that counts its calls.
type rig struct {
	sched *automation.Scheduler
	clock *clock
	calls *atomic.Int32
	audit *audits
	run   *invoke.Runner
	reg   *registry.Registry
}

var start = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func newRig(t *testing.T, st *store.Store, calls *atomic.Int32, o automation.Options) *rig {
	t.Helper()
	c := &clock{t: start}
	o.Now = c.now
	s := automation.New(st.Schedules("/ws"), o)
	reg := registry.New()
	echo, err := tool.New("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}, inv tool.Invocation) (tool.Result, error) {
		calls.Add(1)
		if in.Text == "fail" {
			return tool.Result{}, tool.InputErrorf("asked to fail")
		}
		return tool.Text("echo: " + in.Text), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(echo); err != nil {
		t.Fatal(err)
	}
	if err := cron.Register(reg); err != nil {
		t.Fatal(err)
	}
	au := &audits{}
	tc := &tool.Context{Identity: tool.Identity{Workspace: t.TempDir(), Owner: true, Channel: "mcp", Principal: "alice"}}
	cron.SchedulerService.Set(tc, s)
	r := invoke.New(reg, tc, invoke.WithAudit(au))
	s.SetRunner(r)
	return &rig{sched: s, clock: c, calls: calls, audit: au, run: r, reg: reg}
}

func echoSchedule(kind string) tool.Schedule {
	s := tool.Schedule{Kind: kind, Enabled: true, Owner: tool.Identity{Principal: "alice", Channel: "mcp", Owner: true},
		Payload: tool.SchedulePayload{Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}
	switch kind {
	case tool.ScheduleEvery:
		s.Every = "1m"
	case tool.ScheduleCron:
		s.Expr, s.TZ = "0 9 * * *", "Europe/Berlin"
	}
	return s
}

func TestTickRunsToolCallsAsTheOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{})
	s, err := r.sched.Add(ctx, echoSchedule(tool.ScheduleEvery))
	if err != nil {
		t.Fatal(err)
	}
	if s.NextRun == nil || !s.NextRun.Equal(start.Add(time.Minute)) {
		t.Fatalf("next run %v", s.NextRun)
	}
	r.clock.set(start.Add(59 * time.Second))
	if runs, err := r.sched.Tick(ctx); err != nil || len(runs) != 0 {
		t.Fatalf("ran before due: %v %+v", err, runs)
	}
	r.clock.set(start.Add(time.Minute + time.Second))
	runs, err := r.sched.Tick(ctx)
	if err != nil || len(runs) != 1 || runs[0].Status != tool.RunOK || runs[0].Summary != "echo: hi" || runs[0].Trigger != tool.TriggerSchedule {
		t.Fatalf("%v %+v", err, runs)
	}
	if runs, _ := r.sched.Tick(ctx); len(runs) != 0 {
		t.Fatalf("ran twice: %+v", runs)
	}
	got, _ := r.sched.Get(ctx, s.ID)
	if !got.NextRun.Equal(start.Add(2*time.Minute)) || got.LastRun == nil {
		t.Fatalf("after the run: next %v last %v", got.NextRun, got.LastRun)
	}
	var rec *audit.Record
	for i := range r.audit.recs {
		if r.audit.recs[i].Tool == "echo" {
			rec = &r.audit.recs[i]
		}
	}
	if rec == nil || rec.Channel != "mcp" || rec.Principal != "alice" || !rec.Owner || rec.SessionKey != "cron:"+s.ID {
		t.Fatalf("audit of the scheduled call: %+v", rec)
	}
	// A schedule an agent made runs its calls as that agent (its policy).
	byAgent := echoSchedule(tool.ScheduleEvery)
	byAgent.Owner.AgentID = "writer"
	ag, err := r.sched.Add(ctx, byAgent)
	if err != nil {
		t.Fatal(err)
	}
	if run, err := r.sched.RunNow(ctx, ag.ID); err != nil || run.Status != tool.RunOK {
		t.Fatalf("%v %+v", err, run)
	}
	if last := r.audit.recs[len(r.audit.recs)-1]; last.AgentID != "writer" || last.SessionKey != "cron:"+ag.ID {
		t.Fatalf("the agent's scheduled call is audited as %q in %q", last.AgentID, last.SessionKey)
	}
	hist, err := r.sched.Runs(ctx, s.ID, 0)
	if err != nil || len(hist) != 1 || hist[0].Status != tool.RunOK || hist[0].Finished == nil || !strings.Contains(hist[0].Node, "/") {
		t.Fatalf("%v %+v", err, hist)
	}
	// A finished run is not a stopped process's.
	r.clock.set(start.Add(time.Hour))
	if n, err := r.sched.Expire(ctx); err != nil || n != 0 {
		t.Fatalf("expired %d finished runs: %v", n, err)
	}
}

func TestRunNowAndFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{NoDeliver: "no model is configured"})
	failing := echoSchedule(tool.ScheduleEvery)
	failing.Payload.Arguments = json.RawMessage(`{"text":"fail"}`)
	for _, tt := range []struct {
		name   string
		s      tool.Schedule
		status string
		errHas string
	}{
		{"ok", echoSchedule(tool.ScheduleCron), tool.RunOK, ""},
		{"tool error", failing, tool.RunError, "asked to fail"},
		{"unknown tool", tool.Schedule{Kind: "every", Every: "1h", Enabled: true, Payload: tool.SchedulePayload{Tool: "nope", Arguments: json.RawMessage(`{}`)}}, tool.RunError, "nope"},
		{"message without an agent runner", tool.Schedule{Kind: "every", Every: "1h", Enabled: false, Payload: tool.SchedulePayload{Text: "remember the milk"}}, tool.RunError, "no model is configured"},
	} {
		s, err := r.sched.Add(ctx, tt.s)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		run, err := r.sched.RunNow(ctx, s.ID)
		if err != nil || run.Status != tt.status || !strings.Contains(run.Error, tt.errHas) || run.Trigger != tool.TriggerManual {
			t.Errorf("%s: %v %+v", tt.name, err, run)
		}
		after, _ := r.sched.Get(ctx, s.ID)
		if !after.NextRun.Equal(*s.NextRun) {
			t.Errorf("%s: run now moved the next run from %v to %v", tt.name, s.NextRun, after.NextRun)
		}
	}
	if _, err := r.sched.RunNow(ctx, "cron_missing"); !errors.Is(err, tool.ErrNoSchedule) {
		t.Fatalf("run of a missing schedule: %v", err)
	}
}

func TestMessagesAreDelivered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var got tool.Schedule
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{Deliver: func(_ context.Context, s tool.Schedule) (string, error) {
		got = s
		return "noted", nil
	}})
	s, err := r.sched.Add(ctx, tool.Schedule{Kind: "every", Every: "1h", Enabled: true, Payload: tool.SchedulePayload{Text: "stand up", AgentID: "coach", SessionKey: "agent:coach:main"}})
	if err != nil {
		t.Fatal(err)
	}
	r.clock.set(start.Add(time.Hour))
	runs, err := r.sched.Tick(ctx)
	if err != nil || len(runs) != 1 || runs[0].Status != tool.RunOK || runs[0].Summary != "noted" || got.ID != s.ID || got.Payload.Text != "stand up" {
		t.Fatalf("%v %+v %+v", err, runs, got)
	}
}

// TestMissedRuns is the policy for occurrences that fell while no
// scheduler ran: within the grace window (1h) the schedule runs once;
// beyond it, the schedule runs once (catch-up) if it had an occurrence within the window, or
// the run is recorded skipped; either way the schedule moves past now, and
// every occurrence it moves past that did not run is recorded skipped — in
// one record for those before the run and one for those after it.
func TestMissedRuns(t *testing.T) {
	t.Parallel()
	at := start.Add(time.Hour)
	for _, tt := range []struct {
		name    string
		s       tool.Schedule
		down    time.Duration // how long after the first occurrence the scheduler looks
		status  string        // of the record that is not skipped, if any, else of the one skipped
		trigger string
		records []string // every record of the tick, in order: "run", or "skip FIRST" or "skip FIRST..UNTIL"
		next    string   // "" for none
	}{
		{"daily, 30m late: runs", tool.Schedule{Kind: "cron", Expr: "0 13 * * *"}, 30 * time.Minute, tool.RunOK, tool.TriggerSchedule,
			[]string{"run"}, "2026-11-26T13:00:00Z"},
		{"daily, 3h late: skipped", tool.Schedule{Kind: "cron", Expr: "0 13 * * *"}, 3 * time.Hour, tool.RunSkipped, tool.TriggerSchedule,
			[]string{"skip 2026-11-25T13:00:00Z"}, "2026-11-26T13:00:00Z"},
		{"daily, 3 days late: skipped once", tool.Schedule{Kind: "cron", Expr: "0 13 * * *"}, 72*time.Hour + time.Hour + time.Minute, tool.RunSkipped, tool.TriggerSchedule,
			[]string{"skip 2026-11-25T13:00:00Z..2026-11-29T13:00:00Z"}, "2026-11-29T13:00:00Z"},
		{"daily, 1 day late: runs the one in the window, skips the one before", tool.Schedule{Kind: "cron", Expr: "0 13 * * *"}, 24*time.Hour + 30*time.Minute, tool.RunOK, tool.TriggerCatchUp,
			[]string{"skip 2026-11-25T13:00:00Z", "run"}, "2026-11-27T13:00:00Z"},
		{"every 5m, 3h late: one catch-up run", tool.Schedule{Kind: "every", Every: "5m"}, 3 * time.Hour, tool.RunOK, tool.TriggerCatchUp,
			[]string{"skip 2026-11-25T12:05:00Z..2026-11-25T14:05:00Z", "run", "skip 2026-11-25T14:10:00Z..2026-11-25T15:10:00Z"}, "2026-11-25T15:10:00Z"},
		{"every 5m, 7m late: runs once", tool.Schedule{Kind: "every", Every: "5m"}, 7 * time.Minute, tool.RunOK, tool.TriggerSchedule,
			[]string{"run", "skip 2026-11-25T12:10:00Z"}, "2026-11-25T12:15:00Z"},
		{"at, 10m late: runs", tool.Schedule{Kind: "at", At: &at}, 10 * time.Minute, tool.RunOK, tool.TriggerSchedule, []string{"run"}, ""},
		{"at, 2h late: skipped", tool.Schedule{Kind: "at", At: &at}, 2 * time.Hour, tool.RunSkipped, tool.TriggerSchedule, []string{"skip 2026-11-25T13:00:00Z"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			calls := new(atomic.Int32)
			r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), calls, automation.Options{Grace: time.Hour})
			tt.s.Enabled, tt.s.Payload = true, tool.SchedulePayload{Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}
			s, err := r.sched.Add(ctx, tt.s)
			if err != nil {
				t.Fatal(err)
			}
			r.clock.set(s.NextRun.Add(tt.down))
			runs, err := r.sched.Tick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(runs, func(a, b tool.ScheduleRun) int { return a.Scheduled.Compare(*b.Scheduled) })
			var got []string
			primary := runs[0]
			for _, run := range runs {
				switch {
				case run.Status != tool.RunSkipped:
					got, primary = append(got, "run"), run
				case run.Until != nil:
					got = append(got, "skip "+run.Scheduled.Format(time.RFC3339)+".."+run.Until.Format(time.RFC3339))
				default:
					got = append(got, "skip "+run.Scheduled.Format(time.RFC3339))
				}
				if run.Status == tool.RunSkipped && !strings.HasPrefix(run.Error, "missed: ") {
					t.Errorf("a skipped record does not say why: %+v", run)
				}
			}
			if !slices.Equal(got, tt.records) || primary.Status != tt.status || primary.Trigger != tt.trigger {
				t.Fatalf("records %q, want %q; the main one: %+v", got, tt.records, primary)
			}
			if want := int32(0); tt.status == tool.RunOK {
				want = 1
				if calls.Load() != want {
					t.Fatalf("%d calls", calls.Load())
				}
			} else if calls.Load() != 0 || !strings.Contains(primary.Error, "grace window") {
				t.Fatalf("a skipped run called the tool (%d) or does not say why: %q", calls.Load(), primary.Error)
			}
			if runs, _ := r.sched.Tick(ctx); len(runs) != 0 {
				t.Fatalf("caught up more than once: %+v", runs)
			}
			got2, _ := r.sched.Get(ctx, s.ID)
			if (got2.NextRun == nil) != (tt.next == "") || got2.NextRun != nil && got2.NextRun.Format(time.RFC3339) != tt.next {
				t.Fatalf("next run %v, want %q", got2.NextRun, tt.next)
			}
		})
	}
}

// TestClaimOnce runs two schedulers on one database, as two processes
// would: each due occurrence runs once.
func TestClaimOnce(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		calls := new(atomic.Int32)
		a := newRig(t, storetest.Open(t, dsn), calls, automation.Options{})
		b := newRig(t, storetest.Open(t, dsn), calls, automation.Options{})
		var ids []string
		for range 5 {
			s, err := a.sched.Add(ctx, echoSchedule(tool.ScheduleEvery))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		for minute := 1; minute <= 3; minute++ {
			now := start.Add(time.Duration(minute) * time.Minute)
			a.clock.set(now)
			b.clock.set(now)
			var wg sync.WaitGroup
			var ran atomic.Int32
			for _, r := range []*rig{a, b, a, b} {
				wg.Go(func() {
					runs, err := r.sched.Tick(ctx)
					if err != nil {
						t.Error(err)
					}
					ran.Add(int32(len(runs)))
				})
			}
			wg.Wait()
			if ran.Load() != 5 {
				t.Fatalf("minute %d: %d runs, want one per schedule (5)", minute, ran.Load())
			}
		}
		if calls.Load() != 15 {
			t.Fatalf("%d calls, want 15", calls.Load())
		}
		for _, id := range ids {
			if runs, _ := a.sched.Runs(ctx, id, 0); len(runs) != 3 {
				t.Fatalf("%s: %d runs", id, len(runs))
			}
		}
	})
}
