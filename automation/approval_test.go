package automation_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// TestScheduleNeedingApprovalSaysItWaits: a schedule whose call would
// need a person's approval is kept — by the scheduler, and so by the cron
// tool, on add and on update — and what they return says plainly that
// each run waits for that approval in the console, why, and for how long;
// one whose call runs unasked says nothing of the kind.
func TestScheduleNeedingApprovalSaysItWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{ApprovalTimeout: 3 * time.Minute})
	askEcho := &policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{{Tools: []string{"echo"}, When: map[string][]string{"text": {"deploy*"}}}}}}
	tc := r.run.Context()
	r.sched.SetRunner(invoke.New(r.reg, tc, invoke.WithPolicy(askEcho)))
	says := func(approval string) bool {
		return strings.HasPrefix(approval, "Each run of this call of echo needs a person's approval (requested by policy (") &&
			strings.Contains(approval, "it waits for it in the console of `toolbelt serve` for up to 3m0s (console.approvalTimeout), and fails if nobody approves it by then.")
	}
	s := echoSchedule(tool.ScheduleEvery)
	s.Payload.Arguments = json.RawMessage(`{"text":"deploy now"}`)
	kept, err := r.sched.Add(ctx, s)
	if err != nil || !says(kept.Approval) {
		t.Fatalf("added: %v %q", err, kept.Approval)
	}
	quiet, err := r.sched.Add(ctx, echoSchedule(tool.ScheduleEvery))
	if err != nil || quiet.Approval != "" {
		t.Fatalf("a call that runs unasked: %v %q", err, quiet.Approval)
	}
	cronTool := func(args string) map[string]tool.Schedule {
		t.Helper()
		msg := invoke.New(r.reg, tc).Run(ctx, tool.Call{ID: "c1", Name: "cron", Arguments: json.RawMessage(args)})
		var out map[string]tool.Schedule
		if err := json.Unmarshal([]byte(msg.Content[0].Text), &out); msg.IsError || err != nil {
			t.Fatalf("the cron tool: %v %s", err, msg.Content[0].Text)
		}
		return out
	}
	if added := cronTool(`{"action":"add","every":"1h","tool":"echo","arguments":{"text":"deploy later"}}`)["added"]; !says(added.Approval) {
		t.Errorf("the cron tool's add says: %q", added.Approval)
	}
	if updated := cronTool(`{"action":"update","id":"` + quiet.ID + `","arguments":{"text":"deploy too"}}`)["updated"]; !says(updated.Approval) {
		t.Errorf("the cron tool's update says: %q", updated.Approval)
	}
	if list, err := r.sched.List(ctx); err != nil || len(list) != 3 {
		t.Fatalf("kept: %v %+v", err, list)
	}
}

// TestBlockedScheduledRunSaysWhyAndIsLogged: a scheduled call blocked when
// it is due (the policy changed since it was added) fails saying it was
// blocked and why — not that the tool returned an error — and the process
// that ran it logs the failure.
func TestBlockedScheduledRunSaysWhyAndIsLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var logs syncbuf.Buffer
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	s, err := r.sched.Add(ctx, echoSchedule(tool.ScheduleEvery))
	if err != nil {
		t.Fatal(err)
	}
	askEcho := &policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{{Tools: []string{"echo"}}}}}
	r.sched.SetRunner(invoke.New(r.reg, r.run.Context(), invoke.WithPolicy(askEcho)))
	r.clock.set(start.Add(time.Minute + time.Second))
	runs, err := r.sched.Tick(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%v %+v", err, runs)
	}
	if e := runs[0].Error; runs[0].Status != tool.RunError || !strings.HasPrefix(e, "the call of echo was blocked, so it did not run: This call needs a person's approval") {
		t.Errorf("the run's error: %q", e)
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, `msg="cron: a scheduled run failed" schedule=`+s.ID) || !strings.Contains(out, "was blocked") {
		t.Errorf("the failure is not logged: %s", out)
	}
}
