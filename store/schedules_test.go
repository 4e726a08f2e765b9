package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

func TestSchedules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss, other := st.Schedules("/ws"), st.Schedules("/elsewhere")
		next := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		s := tool.Schedule{ID: "cron_1", Name: "standup", Kind: tool.ScheduleCron, Expr: "0 9 * * 1-5", TZ: "Europe/Berlin", Enabled: true,
			Payload: tool.SchedulePayload{Tool: "exec", Arguments: json.RawMessage(`{"command":"date"}`)},
			Owner:   tool.Identity{Principal: "alice", Channel: "mcp", Owner: true}, NextRun: &next, Anchor: next}
		if err := ss.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := ss.Add(ctx, s); err == nil {
			t.Fatal("a second schedule with the same id was kept")
		}
		got, err := ss.Get(ctx, "cron_1")
		if err != nil || got.Expr != s.Expr || got.TZ != s.TZ || got.Payload.Tool != "exec" || string(got.Payload.Arguments) != `{"command":"date"}` ||
			got.Owner.Principal != "alice" || got.NextRun == nil || !got.NextRun.Equal(next) || got.LastRun != nil || !got.Enabled {
			t.Fatalf("%v %+v", err, got)
		}
		if _, err := other.Get(ctx, "cron_1"); !errors.Is(err, tool.ErrNoSchedule) {
			t.Fatalf("another workspace reads the schedule: %v", err)
		}
		if list, _ := other.List(ctx); len(list) != 0 {
			t.Fatalf("another workspace lists %+v", list)
		}
		got.Name, got.Enabled = "renamed", false
		stale := next.Add(-time.Minute)
		if ok, err := ss.Update(ctx, got, &stale, nil); err != nil || ok {
			t.Fatalf("an update that expects another next run: %v %v", ok, err)
		}
		if unchanged, _ := ss.Get(ctx, "cron_1"); unchanged.Name != "standup" || !unchanged.Enabled {
			t.Fatalf("an update that expected another next run changed the schedule: %+v", unchanged)
		}
		if ok, err := ss.Update(ctx, got, &next, nil); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if due, err := ss.Due(ctx, next.Add(time.Hour)); err != nil || len(due) != 0 {
			t.Fatalf("a disabled schedule is due: %v %+v", err, due)
		}
		got.Enabled = true
		if ok, err := ss.Update(ctx, got, &next, nil); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if due, err := ss.Due(ctx, next.Add(-time.Second)); err != nil || len(due) != 0 {
			t.Fatalf("due before its time: %v %+v", err, due)
		}
		due, err := ss.Due(ctx, next)
		if err != nil || len(due) != 1 || due[0].Name != "renamed" {
			t.Fatalf("%v %+v", err, due)
		}
		// A claim records what became of every occurrence it moves past:
		// here one runs and the two after it are skipped, in one record.
		second, after := next.Add(24*time.Hour), next.Add(72*time.Hour)
		claimed, ok, err := ss.Claim(ctx, "cron_1", next, &after, []tool.ScheduleRun{
			{Trigger: tool.TriggerSchedule, Scheduled: &next, Started: next, Status: tool.RunRunning},
			{Trigger: tool.TriggerSchedule, Scheduled: &second, Until: &after, Started: next, Finished: &next, Status: tool.RunSkipped, Error: "missed"},
		})
		if err != nil || !ok || len(claimed) != 2 || claimed[0].ID == 0 || claimed[1].ID <= claimed[0].ID || claimed[1].ScheduleID != "cron_1" {
			t.Fatalf("claim: %v %v %+v", ok, err, claimed)
		}
		run := claimed[0]
		if _, ok, err := ss.Claim(ctx, "cron_1", next, &after, []tool.ScheduleRun{{Started: next, Status: tool.RunRunning}}); err != nil || ok {
			t.Fatalf("an occurrence was claimed twice: %v %v", ok, err)
		}
		fin := next.Add(time.Second)
		run.Finished, run.Status, run.Summary = &fin, tool.RunOK, "done"
		if err := ss.Finish(ctx, run); err != nil {
			t.Fatal(err)
		}
		manual, err := ss.Start(ctx, "cron_1", tool.ScheduleRun{Trigger: tool.TriggerManual, Started: fin, Status: tool.RunRunning})
		if err != nil || manual.ID <= run.ID {
			t.Fatalf("%v %+v", err, manual)
		}
		runs, err := ss.Runs(ctx, "cron_1", 0)
		if err != nil || len(runs) != 3 || runs[0].ID != manual.ID || runs[2].Status != tool.RunOK || runs[2].Summary != "done" || runs[2].Finished == nil || !runs[2].Scheduled.Equal(next) || runs[2].Until != nil ||
			runs[1].Status != tool.RunSkipped || !runs[1].Scheduled.Equal(second) || runs[1].Until == nil || !runs[1].Until.Equal(after) {
			t.Fatalf("%v %+v", err, runs)
		}
		if _, err := other.Runs(ctx, "cron_1", 0); !errors.Is(err, tool.ErrNoSchedule) {
			t.Fatalf("another workspace reads the runs: %v", err)
		}
		if _, err := other.Start(ctx, "cron_1", tool.ScheduleRun{Started: fin}); !errors.Is(err, tool.ErrNoSchedule) {
			t.Fatalf("another workspace runs the schedule: %v", err)
		}
		if err := other.Remove(ctx, "cron_1"); !errors.Is(err, tool.ErrNoSchedule) {
			t.Fatalf("another workspace removes the schedule: %v", err)
		}
		if err := ss.Remove(ctx, "cron_1"); err != nil {
			t.Fatal(err)
		}
		if n := storetest.Count(t, st, "schedule_runs"); n != 0 {
			t.Fatalf("%d runs of a removed schedule are kept", n)
		}
		if _, err := ss.Update(ctx, got, &next, nil); !errors.Is(err, tool.ErrNoSchedule) {
			t.Fatalf("update of a removed schedule: %v", err)
		}
	})
}

// TestScheduleClaimOnce has many goroutines on two handles of one database
// claim the same occurrence: exactly one wins.
func TestScheduleClaimOnce(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a, b := storetest.Open(t, dsn), storetest.Open(t, dsn)
		next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := a.Schedules("/ws").Add(ctx, tool.Schedule{ID: "x", Kind: tool.ScheduleEvery, Every: "1m0s", Enabled: true, NextRun: &next, Payload: tool.SchedulePayload{Tool: "read"}}); err != nil {
			t.Fatal(err)
		}
		var won atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Go(func() {
				later := next.Add(time.Minute)
				_, ok, err := st.Schedules("/ws").Claim(ctx, "x", next, &later, []tool.ScheduleRun{{Trigger: tool.TriggerSchedule, Started: next, Status: tool.RunRunning}})
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 || storetest.Count(t, a, "schedule_runs") != 1 {
			t.Fatalf("%d claims won, %d runs recorded", won.Load(), storetest.Count(t, a, "schedule_runs"))
		}
	})
}

// TestRunLeases: a run in progress carries a lease from its start; one whose
// lease ran out (its process stopped) is recorded failed, naming the
// process; a renewed one and a finished one are left alone, and so are the
// runs of another workspace.
func TestRunLeases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		start := func(ws, id, node string) (*store.Schedules, tool.ScheduleRun) {
			t.Helper()
			ss := st.Schedules(ws)
			if err := ss.Add(ctx, tool.Schedule{ID: id, Kind: tool.ScheduleEvery, Every: "1h", Enabled: true, Payload: tool.SchedulePayload{Tool: "echo"}, Anchor: at}); err != nil {
				t.Fatal(err)
			}
			run, err := ss.Start(ctx, id, tool.ScheduleRun{Trigger: tool.TriggerManual, Started: at, Status: tool.RunRunning, Node: node})
			if err != nil {
				t.Fatal(err)
			}
			return ss, run
		}
		ss, _ := start("/ws", "cron_gone", "host/1/gone")
		_, alive := start("/ws", "cron_alive", "host/2/alive")
		_, done := start("/ws", "cron_done", "host/3/done")
		other, elsewhere := start("/other", "cron_other", "host/4/other")
		fin := at.Add(time.Second)
		done.Status, done.Finished = tool.RunOK, &fin
		if err := ss.Finish(ctx, done); err != nil {
			t.Fatal(err)
		}
		if n, err := ss.Expire(ctx, at.Add(store.RunLease-time.Second)); err != nil || n != 0 {
			t.Fatalf("expired within the lease: %d %v", n, err)
		}
		if err := ss.Renew(ctx, alive.ID, at.Add(3*store.RunLease)); err != nil {
			t.Fatal(err)
		}
		if n, err := ss.Expire(ctx, at.Add(2*store.RunLease)); err != nil || n != 1 {
			t.Fatalf("expired %d runs, want the one of the stopped process: %v", n, err)
		}
		status := func(ss *store.Schedules, id string) tool.ScheduleRun {
			t.Helper()
			runs, err := ss.Runs(ctx, id, 1)
			if err != nil || len(runs) != 1 {
				t.Fatalf("%v %+v", err, runs)
			}
			return runs[0]
		}
		if r := status(ss, "cron_gone"); r.Status != tool.RunError || r.Finished == nil || r.Node != "host/1/gone" ||
			r.Error != "interrupted: the process that ran it (host/1/gone) stopped before it finished" {
			t.Errorf("the stopped process's run: %+v", r)
		}
		if r := status(ss, "cron_alive"); r.Status != tool.RunRunning {
			t.Errorf("a renewed run was expired: %+v", r)
		}
		if r := status(ss, "cron_done"); r.Status != tool.RunOK || r.Error != "" {
			t.Errorf("a finished run changed: %+v", r)
		}
		if r := status(other, elsewhere.ScheduleID); r.Status != tool.RunRunning {
			t.Errorf("another workspace's run was expired: %+v", r)
		}
	})
}
