package automation_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// syncWriter is a log destination safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestScheduleNeedingApprovalIsRefused: a schedule whose call would need a
// person's approval is refused when it is added — by the scheduler, and so
// by the cron tool — with the reason, and nothing is kept; one whose call
// runs unasked is kept.
func TestScheduleNeedingApprovalIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{})
	askEcho := &policy.Policy{Tools: policy.Rules{Ask: []policy.AskRule{{Tools: []string{"echo"}, When: map[string][]string{"text": {"deploy*"}}}}}}
	tc := r.run.Context()
	r.sched.SetRunner(invoke.New(r.reg, tc, invoke.WithPolicy(askEcho)))
	const why = "needs a person's approval (requested by policy ("
	s := echoSchedule(tool.ScheduleEvery)
	s.Payload.Arguments = json.RawMessage(`{"text":"deploy now"}`)
	var in *tool.InputError
	if _, err := r.sched.Add(ctx, s); !errors.As(err, &in) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "would fail at every run") {
		t.Fatalf("added: %v", err)
	}
	msg := invoke.New(r.reg, tc).Run(ctx, tool.Call{ID: "c1", Name: "cron", Arguments: json.RawMessage(`{"action":"add","every":"1h","tool":"echo","arguments":{"text":"deploy later"}}`)})
	if text := msg.Content[0].Text; !msg.IsError || !strings.Contains(text, why) {
		t.Fatalf("the cron tool added it: %s", text)
	}
	if list, err := r.sched.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("kept: %v %+v", err, list)
	}
	if _, err := r.sched.Add(ctx, echoSchedule(tool.ScheduleEvery)); err != nil {
		t.Fatalf("a call that runs unasked: %v", err)
	}
}

// TestBlockedScheduledRunSaysWhyAndIsLogged: a scheduled call blocked when
// it is due (the policy changed since it was added) fails saying it was
// blocked and why — not that the tool returned an error — and the process
// that ran it logs the failure.
func TestBlockedScheduledRunSaysWhyAndIsLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var logs syncWriter
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
