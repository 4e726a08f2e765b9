package toolbelt_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// schedulePing has the root's scheduler keep a schedule that calls ping
// (which always asks) every second, and checks that adding it says its
// runs wait in the console for wait.
func schedulePing(t *testing.T, tb *toolbelt.Toolbelt, wait string) tool.Schedule {
	t.Helper()
	s, err := tb.Scheduler().Add(context.Background(), tool.Schedule{Kind: tool.ScheduleEvery, Every: "1s", Enabled: true, Owner: tool.Identity{Channel: "cli", Owner: true},
		Payload: tool.SchedulePayload{Tool: "ping", Arguments: json.RawMessage(`{"token":"x"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Approval, "it waits for it in the console of `toolbelt serve` for up to "+wait+" (console.approvalTimeout)") {
		t.Fatalf("adding it says: %q", s.Approval)
	}
	return s
}

// nextRun has the root's scheduler run schedule s when it is next due, and
// returns the run once it ended.
func nextRun(ctx context.Context, tb *toolbelt.Toolbelt, s tool.Schedule) <-chan tool.ScheduleRun {
	done := make(chan tool.ScheduleRun, 1)
	go func() {
		for ctx.Err() == nil {
			runs, err := tb.Scheduler().Tick(ctx)
			for _, r := range runs {
				if r.ScheduleID == s.ID && r.Status != tool.RunSkipped {
					done <- r
					return
				}
			}
			if err != nil {
				done <- tool.ScheduleRun{Error: err.Error()}
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return done
}

// TestScheduledCallWaitsForTheConsole: a schedule whose call needs
// approval is kept, and when it is due, the real scheduler's run waits in
// the console's queue — in the schedule's own session — and runs once the
// console, through another store, approves it.
func TestScheduledCallWaitsForTheConsole(t *testing.T) {
	t.Parallel()
	tb, console, _ := openWaiting(t, "console:\n  approvalTimeout: 1m\n", toolbelt.Options{})
	beat(t, console)
	ctx := context.Background()
	s := schedulePing(t, tb, "1m0s")
	done := nextRun(ctx, tb, s)
	p := waitingFor(t, console, func(p store.PendingApproval) bool { return p.Caller.SessionKey == "cron:"+s.ID })
	if p.Tool != "ping" || p.Caller.Channel != "cli" || !p.Caller.Owner {
		t.Errorf("pending: %+v", p)
	}
	if err := console.Pending().Decide(ctx, p.ID, store.PendingDecision{Allow: true, By: "console (ada)"}); err != nil {
		t.Fatal(err)
	}
	if run := <-done; run.Status != tool.RunOK || run.Summary != "pong" || run.Trigger != tool.TriggerSchedule {
		t.Fatalf("the run: %+v", run)
	}
}

// TestScheduledCallNobodyApprovesFails: a scheduled run nobody approves
// in the console within console.approvalTimeout fails with the console's
// message, which the run records and the process that ran it logs.
func TestScheduledCallNobodyApprovesFails(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	tb, console, _ := openWaiting(t, "console:\n  approvalTimeout: 2s\n", toolbelt.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	beat(t, console)
	s := schedulePing(t, tb, "2s")
	const why = "the call of ping was blocked, so it did not run: No one approved this call in the console within 2s, so it was not run."
	run := <-nextRun(context.Background(), tb, s)
	if run.Status != tool.RunError || !strings.HasPrefix(run.Error, why) {
		t.Fatalf("the run: %+v", run)
	}
	if runs, err := tb.Scheduler().Runs(context.Background(), s.ID, 1); err != nil || len(runs) != 1 || runs[0].Error != run.Error {
		t.Errorf("recorded: %v %+v", err, runs)
	}
	if out := logs.String(); !strings.Contains(out, `msg="cron: a scheduled run failed" schedule=`+s.ID) || !strings.Contains(out, "No one approved this call in the console within 2s") {
		t.Errorf("the failure is not logged: %s", out)
	}
}
