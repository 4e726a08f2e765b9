package automation_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/cron"
)

// TestScheduledCallsRunAsTheirSetter: a scheduled tool call runs with the
// rights and limits of whoever set it — not as the owner when they were
// not, and under the sub-agent and sandbox policies when they were bound by
// them — through a pipeline that itself runs as the owner. A schedule kept
// before that was recorded does not run, and says how to make it again,
// unless a person set it at the command line (the owner then as now).
func TestScheduledCallsRunAsTheirSetter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, t.TempDir()+"/t.db")
	calls := new(atomic.Int32)
	r := newRig(t, st, calls, automation.Options{})
	strict := &policy.Policy{OwnerOnly: []string{"echo"}, Subagents: policy.Rules{Deny: []string{"echo"}}, Sandbox: policy.Rules{Deny: []string{"echo"}}}
	tc := &tool.Context{Identity: tool.Identity{Workspace: t.TempDir(), Owner: true, Channel: "cli"}}
	cron.SchedulerService.Set(tc, r.sched)
	r.sched.SetRunner(invoke.New(r.reg, tc, invoke.WithPolicy(strict), invoke.WithAudit(r.audit)))
	for _, tt := range []struct {
		name   string
		by     tool.Identity
		legacy bool
		err    string
	}{
		{"the owner", tool.Identity{Channel: "cli", Owner: true}, false, ""},
		{"a caller not the owner", tool.Identity{Channel: "mcp", Principal: "bob"}, false, "Tool restricted to owner senders."},
		{"a sub-agent", tool.Identity{AgentID: "checker", SessionKey: "agent:checker:subagent:1", Owner: true, Subagent: true}, false, "(subagent: "},
		{"a sandboxed caller", tool.Identity{Owner: true, Sandboxed: true}, false, "(sandbox: "},
		{"a person at the command line, kept before", tool.Identity{Channel: "cli"}, true, ""},
		{"an agent's session, kept before", tool.Identity{Channel: "cli", AgentID: "checker", SessionKey: "agent:checker:subagent:1"}, true, "does not run: remove it and add it again"},
	} {
		s := echoSchedule(tool.ScheduleEvery)
		s.Owner = tt.by
		s, err := r.sched.Add(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if tt.legacy {
			if err := st.Write(ctx, func(tx *store.Tx) error {
				// As schedules named their setter before: no owner flag.
				old, err := json.Marshal(struct {
					Channel    string `json:"channel,omitempty"`
					AgentID    string `json:"agentId,omitempty"`
					SessionKey string `json:"sessionKey,omitempty"`
				}{tt.by.Channel, tt.by.AgentID, tt.by.SessionKey})
				if err != nil {
					return err
				}
				_, err = tx.Exec(ctx, "UPDATE schedules SET owner = ? WHERE id = ?", string(old), s.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		before := calls.Load()
		run, err := r.sched.RunNow(ctx, s.ID)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", tt.name, err)
		case tt.err == "" && (run.Status != tool.RunOK || calls.Load() != before+1):
			t.Errorf("%s: %+v, %d calls", tt.name, run, calls.Load()-before)
		case tt.err != "" && (run.Status != tool.RunError || !strings.Contains(run.Error, tt.err) || calls.Load() != before):
			t.Errorf("%s: %+v, %d calls; want refused with %q", tt.name, run, calls.Load()-before, tt.err)
		}
	}
	var rec string
	for _, a := range r.audit.recs {
		if a.Tool == "echo" && a.AgentID == "checker" {
			b, _ := json.Marshal(a)
			rec = string(b)
		}
	}
	if !strings.Contains(rec, `{"layer":"subagent","decision":"deny"`) || !strings.Contains(rec, `"sessionKey":"cron:`) {
		t.Errorf("the sub-agent's scheduled call is not audited as denied in the schedule's session: %s", rec)
	}
}
