package invoke_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// questioner is a tool that asks whether it may reach host.test in the
// middle of its call (tool.Ask), records the host (tool.RecordHosts), and
// says what it was told.
var questioner = tool.Tool{Name: "reach", Execute: func(ctx context.Context, _ tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
	r := tool.Ask(ctx, tool.Question{Message: "it wants to reach host.test:443", Reason: "a new host", Action: "host.test", Always: "host.test"})
	outcome := "refused"
	if r.Allow {
		outcome = "reached"
	}
	tool.RecordHosts(ctx, tool.HostUse{Host: "host.test", Port: "443", Outcome: outcome})
	return tool.Textf("allow=%v answer=%s by=%s reason=%s", r.Allow, r.Answer, r.By, r.Reason), nil
}}

// TestAskMidCall: a tool's question mid-call goes to the call's confirmer
// with the facts (and not for the call itself, whose risk needs none); a
// yes for the session holds for the next call without asking; a no, a
// confirmer that cannot ask, one that answers only between calls, and no
// confirmer at all are refusals with the reason; each question and host is
// in the call's audit record.
func TestAskMidCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer invoke.Answer
		err    error
		none   bool // no confirmer
		want   []string
		record string
	}{
		{"yes for the session", invoke.Answer{Allow: true, Grant: invoke.GrantSession, By: "dana"}, nil, false, []string{"allow=true answer=allow-session by=dana", "allow=true answer=allowed-before"}, "allow-session"},
		{"no", invoke.Answer{Reason: "not that one", By: "dana"}, nil, false, []string{"allow=false answer=deny by=dana reason=not that one"}, "deny"},
		{"cannot ask", invoke.Answer{}, &invoke.NoOneToAsk{Why: "no elicitation"}, false, []string{"allow=false answer=none by= reason=no elicitation"}, "none"},
		{"between calls", invoke.Answer{}, fmt.Errorf("asked the client: %w", invoke.ErrPending), false, []string{"allow=false answer=none by= reason=this confirmer answers only between calls"}, "none"},
		{"no confirmer", invoke.Answer{}, nil, true, []string{"allow=false answer=none by= reason=no one is available"}, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []invoke.Confirmation
			log := &records{}
			opts := []invoke.Option{invoke.WithAudit(log)}
			if !tc.none {
				opts = append(opts, invoke.WithConfirmer(invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
					asked = append(asked, c)
					return tc.answer, tc.err
				})))
			}
			r := newRunner(t, []tool.Tool{questioner}, opts...)
			for i, want := range tc.want {
				msg := r.Run(context.Background(), tool.Call{ID: fmt.Sprint("c", i), Name: "reach", Arguments: []byte(`{}`)})
				if got := text(msg); !strings.HasPrefix(got, want) {
					t.Errorf("call %d: %q, want %q…", i, got, want)
				}
			}
			if !tc.none && (len(asked) != 1 || asked[0].Message != "it wants to reach host.test:443" || asked[0].Reason != "a new host" || asked[0].Always != "host.test" || asked[0].Tool != "reach") {
				t.Errorf("the confirmer was asked %+v, want the question once", asked)
			}
			rec := log.list[0]
			if len(rec.Questions) != 1 || rec.Questions[0].Message != "it wants to reach host.test:443" || rec.Questions[0].Answer != tc.record || rec.Questions[0].By != tc.answer.By {
				t.Errorf("the audit record's questions: %+v, want one answered %s by %q", rec.Questions, tc.record, tc.answer.By)
			}
			if len(rec.Network) != 1 || rec.Network[0].Host != "host.test" {
				t.Errorf("the audit record's network: %+v", rec.Network)
			}
		})
	}
}

// TestAskOutsideThePipeline: a tool called directly has nobody to ask.
func TestAskOutsideThePipeline(t *testing.T) {
	t.Parallel()
	res, err := questioner.Execute(context.Background(), tool.Call{}, nil, nil)
	if err != nil || !strings.HasPrefix(res.Content[0].Text, "allow=false answer=none") {
		t.Errorf("%v %v", res, err)
	}
}

// TestAskMidCallFollowsTheMode: the permission mode answers a tool's
// question as it answers a call's approval — dontAsk denies without
// asking, bypass allows — and nobody is asked.
func TestAskMidCallFollowsTheMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   policy.Mode
		want   string
		record string
	}{
		{policy.ModeDontAsk, "allow=false answer=mode-deny by=dontAsk mode", "mode-deny"},
		{policy.ModeBypass, "allow=true answer=mode-allow by=bypass mode", "mode-allow"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			asked := 0
			log := &records{}
			r := newRunner(t, []tool.Tool{questioner}, invoke.WithAudit(log),
				invoke.WithModes(policy.NewModeSwitch(tc.mode, nil)),
				invoke.WithConfirmer(invoke.ConfirmFunc(func(context.Context, invoke.Confirmation) (invoke.Answer, error) {
					asked++
					return invoke.Answer{Allow: true, By: "dana"}, nil
				})))
			msg := r.Run(context.Background(), tool.Call{ID: "c1", Name: "reach", Arguments: []byte(`{}`)})
			if got := text(msg); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%q, want %q…", got, tc.want)
			}
			if asked != 0 {
				t.Errorf("the confirmer was asked %d times in %s mode", asked, tc.mode)
			}
			if rec := log.list[len(log.list)-1]; len(rec.Questions) != 1 || rec.Questions[0].Answer != tc.record {
				t.Errorf("the audit record's questions: %+v, want one answered %s", rec.Questions, tc.record)
			}
		})
	}
}

// personOnly asks, mid-call, a question only a person may answer.
var personOnly = tool.Tool{Name: "patch", Execute: func(ctx context.Context, _ tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
	r := tool.Ask(ctx, tool.Question{Message: "rewrite the policy", Action: "policy", Always: "the policy", PersonOnly: true})
	return tool.Textf("allow=%v answer=%s", r.Allow, r.Answer), nil
}}

// TestPersonOnlyQuestion: a PersonOnly question goes to a person even in
// bypass mode, every time (a yes for the session does not hold for the
// next), with no "always" offered, and a question nobody answered in time
// is refused even where confirmOnTimeout is allow; dontAsk still denies.
func TestPersonOnlyQuestion(t *testing.T) {
	t.Parallel()
	var asked []invoke.Confirmation
	yes := invoke.WithConfirmer(invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
		asked = append(asked, c)
		return invoke.Answer{Allow: true, Grant: invoke.GrantSession, By: "dana"}, nil
	}))
	r := newRunner(t, []tool.Tool{personOnly}, yes, invoke.WithModes(policy.NewModeSwitch(policy.ModeBypass, nil)))
	for i := range 2 {
		if got := text(r.Run(context.Background(), tool.Call{ID: fmt.Sprint("c", i), Name: "patch", Arguments: []byte(`{}`)})); got != "allow=true answer=allow-once" {
			t.Errorf("call %d in bypass mode: %q, want a person's allow-once", i, got)
		}
	}
	if len(asked) != 2 || asked[0].Always != "" || asked[0].NoAlways == "" {
		t.Errorf("the person was asked %+v; want twice, never offered always", asked)
	}

	slow := invoke.WithConfirmer(invoke.ConfirmFunc(func(ctx context.Context, _ invoke.Confirmation) (invoke.Answer, error) {
		<-ctx.Done()
		return invoke.Answer{}, ctx.Err()
	}))
	late := newRunner(t, []tool.Tool{personOnly}, slow, invoke.WithConfig(invoke.Config{ConfirmTimeout: 30 * time.Millisecond, ConfirmOnTimeout: "allow"}))
	if got := text(late.Run(context.Background(), tool.Call{ID: "t", Name: "patch", Arguments: []byte(`{}`)})); got != "allow=false answer=timeout" {
		t.Errorf("unanswered with confirmOnTimeout allow: %q, want refused", got)
	}

	dont := newRunner(t, []tool.Tool{personOnly}, yes, invoke.WithModes(policy.NewModeSwitch(policy.ModeDontAsk, nil)))
	if got := text(dont.Run(context.Background(), tool.Call{ID: "d", Name: "patch", Arguments: []byte(`{}`)})); got != "allow=false answer=mode-deny" {
		t.Errorf("dontAsk mode: %q", got)
	}
}
