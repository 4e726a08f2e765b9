package ask_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// askerFunc is an Asker made of a function.
type askerFunc func(context.Context, ask.Question) (ask.Answer, error)

func (f askerFunc) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) { return f(ctx, q) }

// runner returns a pipeline offering ask_user with asker (none when nil)
// and the settings given.
func runner(t *testing.T, asker ask.Asker, settings map[string]any) *invoke.Runner {
	t.Helper()
	reg := registry.New()
	if err := ask.Register(reg); err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Config: tool.Config{"ask_user": settings}}
	if asker != nil {
		ask.AskerService.Set(tc, asker)
	}
	r := invoke.New(reg, tc)
	t.Cleanup(r.Close)
	return r
}

func text(msg tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range msg.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestAskUserAnswer: the answer comes back in words for the model and
// structured in the details.
func TestAskUserAnswer(t *testing.T) {
	t.Parallel()
	var got ask.Question
	r := runner(t, askerFunc(func(_ context.Context, q ask.Question) (ask.Answer, error) {
		got = q
		return ask.Answer{Chosen: []string{"tabs"}, By: "test"}, nil
	}), nil)
	msg := r.Run(context.Background(), tool.Call{Name: "ask_user", Arguments: []byte(`{"question":"Tabs or spaces?","options":[{"label":"tabs"},{"label":"spaces","description":"four"}]}`)})
	if msg.IsError || text(msg) != `The person chose "tabs".` {
		t.Fatalf("result (error %v): %s", msg.IsError, text(msg))
	}
	if d, ok := msg.Details.(ask.Details); !ok || !d.Answered || d.Answer.Chosen[0] != "tabs" {
		t.Errorf("details %#v", msg.Details)
	}
	if got.Options[1].Description != "four" {
		t.Errorf("the asker got %+v", got)
	}
}

// TestAskUserTimesOut: a question nobody answers within
// tools.ask_user.timeout ends in a result saying so, not an error.
func TestAskUserTimesOut(t *testing.T) {
	t.Parallel()
	r := runner(t, askerFunc(func(ctx context.Context, _ ask.Question) (ask.Answer, error) {
		<-ctx.Done()
		return ask.Answer{}, ctx.Err()
	}), map[string]any{"timeout": "1ms"})
	msg := r.Run(context.Background(), tool.Call{Name: "ask_user", Arguments: []byte(`{"question":"Still there?"}`)})
	if msg.IsError || !strings.HasPrefix(text(msg), "Nobody answered your question within 1ms.") {
		t.Fatalf("result (error %v): %s", msg.IsError, text(msg))
	}
	if d, ok := msg.Details.(ask.Details); !ok || d.Answered || d.AuditNote() != "nobody answered" {
		t.Errorf("details %#v", msg.Details)
	}
}

// TestAskUserUnavailable: with nobody to ask, ask_user is not offered and
// says why; an asker that finds out only when asked says so at once.
func TestAskUserUnavailable(t *testing.T) {
	t.Parallel()
	var why error
	if tools := runner(t, nil, nil).Tools(func(_ string, err error) { why = err }); len(tools) != 0 {
		t.Errorf("offered %d tools", len(tools))
	}
	if why == nil || !strings.Contains(why.Error(), "nobody can answer questions here") {
		t.Errorf("reason: %v", why)
	}
	r := runner(t, askerFunc(func(context.Context, ask.Question) (ask.Answer, error) {
		return ask.Answer{}, fmt.Errorf("%w: no terminal", ask.ErrNobodyToAsk)
	}), nil)
	msg := r.Run(context.Background(), tool.Call{Name: "ask_user", Arguments: []byte(`{"question":"Go on?"}`)})
	if !msg.IsError || !strings.Contains(text(msg), "no terminal") {
		t.Errorf("result (error %v): %s", msg.IsError, text(msg))
	}
}

// TestAskUserTimeoutSetting: a timeout that is not a duration up to an
// hour is refused when the configuration is checked.
func TestAskUserTimeoutSetting(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"soon", "0s", "-1m", "2h"} {
		s := ask.Settings{Timeout: bad}
		if err := s.CheckSettings(); err == nil || !strings.Contains(err.Error(), "ask_user.timeout") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := (&ask.Settings{Timeout: "30m"}).CheckSettings(); err != nil {
		t.Error(err)
	}
}
