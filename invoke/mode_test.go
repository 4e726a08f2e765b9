package invoke_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestModes: what each permission mode does with a call that changes
// things, one that changes nothing though its tool may (its preview says
// ReadOnly), and a policy's deny; a switch shows in the next call, and a
// call in bypass mode runs as a sandboxed caller.
func TestModes(t *testing.T) {
	t.Parallel()
	var sandboxed []bool
	reg := modeTools(t, func(inv tool.Invocation) { sandboxed = append(sandboxed, inv.Context.Sandboxed) })
	modes := policy.NewModeSwitch(policy.ModeDefault, nil)
	p := &policy.Policy{Tools: policy.Rules{Deny: []string{"banned"}}}
	r := invoke.New(reg, nil, invoke.WithModes(modes), invoke.WithPolicy(p))
	run := func(name string) string {
		msg := r.Run(context.Background(), tool.Call{Name: name})
		return msg.Content[0].Text
	}
	for _, c := range []struct {
		mode         policy.Mode
		change, look string
	}{
		{policy.ModeDefault, "no one is available to approve it", "ran"},
		{policy.ModePlan, "You are planning (plan mode)", "ran"},
		{policy.ModeDontAsk, "in dontAsk mode what would ask is denied", "ran"},
		{policy.ModeBypass, "ran", "ran"},
	} {
		modes.Set(c.mode)
		if got := run("change"); !strings.Contains(got, c.change) {
			t.Errorf("%s: change: %q, want %q", c.mode, got, c.change)
		}
		if got := run("look"); !strings.Contains(got, c.look) {
			t.Errorf("%s: look: %q, want %q", c.mode, got, c.look)
		}
		if got := run("banned"); !strings.Contains(got, "denied") && !strings.Contains(got, "not allowed") {
			t.Errorf("%s: a denied tool ran: %q", c.mode, got)
		}
	}
	if want := []bool{false, false, false, true, true}; !slices.Equal(sandboxed, want) {
		t.Errorf("sandboxed callers of the calls that ran (look in default, plan, dontAsk; change and look in bypass): %v, want %v", sandboxed, want)
	}
}

// modeTools registers the tools the modes are tried with: change (high
// risk), look (a tool that may change things, whose preview says this
// call changes nothing) and banned; ran sees each call that runs.
func modeTools(t *testing.T, ran func(tool.Invocation)) *registry.Registry {
	t.Helper()
	newTool := func(name string, readOnly bool) tool.Tool {
		t := tool.Must(tool.New(name, "Changes things, or says it would not.", func(_ context.Context, _ struct{}, inv tool.Invocation) (tool.Result, error) {
			ran(inv)
			return tool.Text("ran"), nil
		}))
		t.Meta = tool.Meta{Risk: tool.RiskHigh}
		t.Preview = func(context.Context, tool.Call, *tool.Context) (tool.Effects, error) {
			if readOnly {
				return tool.Effects{Summary: name, ReadOnly: true, Risk: tool.RiskLow}, nil
			}
			return tool.Effects{Summary: name}, nil
		}
		return t
	}
	reg := registry.New()
	for _, tl := range []tool.Tool{newTool("change", false), newTool("look", true), newTool("banned", false)} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// TestNeedsApprovalFollowsMode: what NeedsApproval foresees of a call
// agrees with what its mode does when it runs: a call that asks in the
// default mode is refused in plan and dontAsk modes and needs nobody in
// bypass mode; one that would not ask needs nobody in any mode; nothing
// runs.
func TestNeedsApprovalFollowsMode(t *testing.T) {
	t.Parallel()
	reg := modeTools(t, func(tool.Invocation) { t.Error("NeedsApproval ran a call") })
	modes := policy.NewModeSwitch(policy.ModeDefault, nil)
	r := invoke.New(reg, nil, invoke.WithModes(modes))
	for _, c := range []struct {
		mode       policy.Mode
		why, error string // of change
	}{
		{policy.ModeDefault, "high-risk", ""},
		{policy.ModeAcceptEdits, "high-risk", ""},
		{policy.ModePlan, "", "the permission mode refuses it: You are planning (plan mode)"},
		{policy.ModeDontAsk, "", "the permission mode refuses it: This call would need a person's approval"},
		{policy.ModeBypass, "", ""},
	} {
		modes.Set(c.mode)
		why, err := r.NeedsApproval(context.Background(), tool.Call{Name: "change"})
		if (why == "") != (c.why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: change needs approval %q, want %q", c.mode, why, c.why)
		}
		if got := fmt.Sprint(err); c.error == "" && err != nil || c.error != "" && !strings.Contains(got, c.error) {
			t.Errorf("%s: change: error %v, want %q", c.mode, err, c.error)
		}
		if why, err := r.NeedsApproval(context.Background(), tool.Call{Name: "look"}); why != "" || err != nil {
			t.Errorf("%s: look needs approval %q, %v", c.mode, why, err)
		}
	}
}
