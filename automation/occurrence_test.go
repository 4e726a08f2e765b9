package automation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/cron"
)

// TestEveryOccurrenceRunsOrIsSkipped runs two schedulers on one database,
// as two processes would, over hundreds of occurrences of several
// schedules, with clocks a little apart that move on by less than an
// interval, by several intervals (a late tick: a slow database, a loaded
// machine) and by more than the grace window (an outage), while schedules
// are renamed beside the ticks. Every occurrence from a schedule's first to
// its next run must end up with exactly one record: a run (ok or error) or
// a skipped record that covers it. The clock's steps are random;
// TOOLBELT_TEST_SEED repeats a run's.
func TestEveryOccurrenceRunsOrIsSkipped(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		seed := uint64(time.Now().UnixNano())
		if v := os.Getenv("TOOLBELT_TEST_SEED"); v != "" {
			var err error
			if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
				t.Fatalf("TOOLBELT_TEST_SEED=%q: %v", v, err)
			}
		}
		t.Logf("seed %d (TOOLBELT_TEST_SEED=%d repeats this run)", seed, seed)
		rng := rand.New(rand.NewPCG(seed, 26))
		ctx := context.Background()
		calls := new(atomic.Int32)
		o := automation.Options{Grace: 30 * time.Second}
		a := newRig(t, storetest.Open(t, dsn), calls, o)
		b := newRig(t, storetest.Open(t, dsn), calls, o)
		var scheds []tool.Schedule
		for _, s := range []tool.Schedule{
			{Kind: tool.ScheduleEvery, Every: "1s"},
			{Kind: tool.ScheduleEvery, Every: "7s"},
			{Kind: tool.ScheduleCron, Expr: "* * * * *"},
		} {
			s.Enabled, s.Payload = true, tool.SchedulePayload{Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}
			kept, err := a.sched.Add(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			scheds = append(scheds, kept)
		}
		steps := []time.Duration{300 * time.Millisecond, 999 * time.Millisecond, time.Second, 1001 * time.Millisecond, 2500 * time.Millisecond, 9 * time.Second, 45 * time.Second, 3 * time.Minute}
		now := start
		for range 400 {
			now = now.Add(steps[rng.IntN(len(steps))])
			a.clock.set(now)
			b.clock.set(now.Add(time.Duration(rng.IntN(100)-50) * time.Millisecond))
			var wg sync.WaitGroup
			for _, r := range []*rig{a, b} {
				wg.Go(func() {
					if _, err := r.sched.Tick(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			if rng.IntN(4) == 0 {
				id := scheds[rng.IntN(len(scheds))].ID
				wg.Go(func() {
					s, err := a.sched.Get(ctx, id)
					if err == nil {
						s.Name = "renamed at " + now.Format(time.TimeOnly)
						_, err = a.sched.Update(ctx, s)
					}
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		var ok int32
		for _, s := range scheds {
			ok += int32(checkOccurrences(t, a, s, seed))
		}
		if calls.Load() != ok {
			t.Errorf("the tool was called %d times for %d runs recorded ok (seed %d)", calls.Load(), ok, seed)
		}
	})
}

// checkOccurrences checks that every occurrence of s from its first up to
// its next run has exactly one record, and returns how many ran ok.
func checkOccurrences(t *testing.T, r *rig, s tool.Schedule, seed uint64) (ok int) {
	t.Helper()
	ctx := context.Background()
	now, err := r.sched.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := r.sched.Runs(ctx, s.ID, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	covers := func(run tool.ScheduleRun, o time.Time) bool {
		switch {
		case run.Scheduled == nil:
			return false
		case run.Until != nil:
			return run.Status == tool.RunSkipped && !o.Before(*run.Scheduled) && o.Before(*run.Until)
		}
		return run.Scheduled.Equal(o)
	}
	var missing, twice []string
	n := 0
	for o := *s.NextRun; o.Before(*now.NextRun); {
		n++
		var by []string
		for _, run := range runs {
			if covers(run, o) {
				by = append(by, fmt.Sprintf("run %d (%s)", run.ID, run.Status))
			}
		}
		switch {
		case len(by) == 0:
			missing = append(missing, o.Format(time.TimeOnly))
		case len(by) > 1:
			twice = append(twice, fmt.Sprintf("%s by %v", o.Format(time.TimeOnly), by))
		}
		if o, _, err = cron.Next(s, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range runs {
		if run.Status == tool.RunOK {
			ok++
		}
	}
	if len(missing) > 0 || len(twice) > 0 {
		t.Errorf("schedule %s %s: of %d occurrences, %d neither ran nor were recorded skipped %v, %d were recorded more than once %v (seed %d)",
			s.Kind, s.Every+s.Expr, n, len(missing), head(missing), len(twice), head(twice), seed)
	}
	return ok
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// TestUpdateOfADueSchedule: an update that keeps the timing of an enabled
// schedule keeps its next run, so an occurrence that came due before a
// scheduler claimed it still runs; one that changes the timing or disables
// the schedule records that occurrence skipped, saying why.
func TestUpdateOfADueSchedule(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		change func(*tool.Schedule)
		ran    bool // the due occurrence runs at the next tick
	}{
		{"renamed", func(s *tool.Schedule) { s.Name = "renamed" }, true},
		{"another payload", func(s *tool.Schedule) { s.Payload.Arguments = json.RawMessage(`{"text":"y"}`) }, true},
		{"another interval", func(s *tool.Schedule) { s.Every, s.Anchor = "5m", time.Time{} }, false},
		{"disabled", func(s *tool.Schedule) { s.Enabled = false }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			calls := new(atomic.Int32)
			r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), calls, automation.Options{})
			s, err := r.sched.Add(ctx, echoSchedule(tool.ScheduleEvery))
			if err != nil {
				t.Fatal(err)
			}
			due := *s.NextRun
			r.clock.set(due.Add(10 * time.Second))
			tt.change(&s)
			if _, err := r.sched.Update(ctx, s); err != nil {
				t.Fatal(err)
			}
			ticked, err := r.sched.Tick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := r.sched.Runs(ctx, s.ID, 0)
			if err != nil || len(runs) != 1 || !runs[0].Scheduled.Equal(due) {
				t.Fatalf("the due occurrence has no record, or more than one: %v %+v", err, runs)
			}
			if ran := runs[0].Status == tool.RunOK; ran != tt.ran || len(ticked) != int(calls.Load()) {
				t.Fatalf("ran %v, want %v; ticked %+v", ran, tt.ran, ticked)
			}
			if !tt.ran && (runs[0].Status != tool.RunSkipped || !strings.Contains(runs[0].Error, "changed at")) {
				t.Fatalf("the occurrence the update moved past: %+v", runs[0])
			}
		})
	}
}
