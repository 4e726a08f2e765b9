package invoke_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestCallIdentity: a call without an id gets a unique one; a provider's
// id is answered with and kept beside Toolbelt's; the tool and every record
// see the call's scope, its workspace resolved.
func TestCallIdentity(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.EvalSymlinks(real)
	var seen []tool.Scope
	var ids []string
	probe := fn("probe", func(ctx context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
		s, _ := tool.ScopeFrom(ctx)
		seen, ids = append(seen, s), append(ids, call.ID)
		return tool.Text("ok"), nil
	})
	rec := &records{}
	reg := registry.New()
	if err := reg.Register(probe); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: link, SessionKey: "s1"}}, invoke.WithAudit(rec))
	ctx := context.Background()
	m1 := r.Run(ctx, tool.Call{Name: "probe", Arguments: []byte(`{"path":"a"}`)})
	m2 := r.Run(ctx, tool.Call{Name: "probe", Arguments: []byte(`{"path":"a"}`)})
	m3 := r.Run(ctx, tool.Call{ID: "tb_1", ProviderID: "toolu_01", Name: "probe", Arguments: []byte(`{"path":"a"}`)})
	idShape := regexp.MustCompile(`^call_[0-9a-hjkmnp-tv-z]{18}$`)
	if !idShape.MatchString(m1.ToolCallID) || !idShape.MatchString(m2.ToolCallID) || m1.ToolCallID == m2.ToolCallID {
		t.Errorf("ids made for calls without one: %q %q", m1.ToolCallID, m2.ToolCallID)
	}
	if m3.ToolCallID != "toolu_01" || ids[2] != "tb_1" {
		t.Errorf("with a provider id: message answers %q, the tool saw %q", m3.ToolCallID, ids[2])
	}
	want := tool.Scope{Workspace: real, Session: "s1"}
	for i, s := range seen {
		if s != want {
			t.Errorf("call %d ran in scope %+v, want %+v", i, s, want)
		}
	}
	if len(rec.list) != 3 {
		t.Fatalf("%d audit records", len(rec.list))
	}
	if r := rec.list[2]; r.CallID != "tb_1" || r.ProviderCallID != "toolu_01" || r.Workspace != real || r.SessionKey != "s1" {
		t.Errorf("audit record %+v", r)
	}
	if r := rec.list[0]; r.CallID != m1.ToolCallID || r.ProviderCallID != "" || r.Workspace != real {
		t.Errorf("audit record %+v", r)
	}
}

// TestCallerReachesEveryReader: a call run for a caller (invoke.WithCaller)
// runs as one identity — the runner's made to run as the caller, in the
// runner's workspace — and the tool, the policy (its layers, and what
// Explain shows it), the confirmation prompt, the audit record and the
// labels of what the call keeps (the journal's and the kept output's
// scope) all see that same identity.
func TestCallerReachesEveryReader(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.EvalSymlinks(real)
	var (
		ran       tool.Identity
		journaled tool.Scope
	)
	probe := fn("probe", func(ctx context.Context, call tool.Call, tc *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
		ran = tc.Identity
		if err := tc.Journal.Record(ctx, call.ID, tool.FileChange{Path: "a"}); err != nil {
			return tool.Result{}, err
		}
		return tool.Text(strings.Repeat("long output ", 100)), nil
	})
	probe.Meta.Risk = tool.RiskHigh
	reg := registry.New()
	if err := reg.Register(probe); err != nil {
		t.Fatal(err)
	}
	var asked tool.Identity
	confirm := invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
		asked = c.Caller
		return invoke.Answer{Allow: true, By: "test"}, nil
	})
	p := &policy.Policy{
		OwnerOnly: []string{"probe"},
		Agents:    map[string]policy.Rules{"main": {Allow: []string{"probe"}}},
		Channels:  map[string]policy.Rules{"mcp": {Allow: []string{"probe"}}},
		Subagents: policy.Rules{Allow: []string{"probe"}},
	}
	outputs := &scopedOutputs{Outputs: invoke.NewMemoryOutputs(1 << 20)}
	log := &records{}
	tc := &tool.Context{
		Identity: tool.Identity{Workspace: link, AgentID: "main", SessionKey: "s0", Channel: "cli"},
		Journal:  journalFunc(func(ctx context.Context) { journaled, _ = tool.ScopeFrom(ctx) }),
	}
	r := invoke.New(reg, tc, invoke.WithPolicy(p), invoke.WithConfirmer(confirm), invoke.WithAudit(log),
		invoke.WithOutputs(outputs), invoke.WithConfig(invoke.Config{MaxResultChars: 100}))

	caller := tool.Identity{SessionKey: "s1", Channel: "mcp", Principal: "alice", Owner: true, Subagent: true, Workspace: "/elsewhere"}
	want := tool.Identity{Workspace: link, AgentID: "main", SessionKey: "s1", Channel: "mcp", Principal: "alice", Owner: true, Subagent: true}
	ctx := invoke.WithCaller(context.Background(), caller)
	call := tool.Call{ID: "c1", Name: "probe", Arguments: []byte(`{"path":"a"}`)}
	if msg := r.Run(ctx, call); msg.IsError {
		t.Fatalf("the call failed: %s", text(msg))
	}
	if ran != want {
		t.Errorf("the tool ran as %+v, want %+v", ran, want)
	}
	if asked != want {
		t.Errorf("the person was asked about a call by %+v, want %+v", asked, want)
	}
	scope := tool.Scope{Workspace: real, Session: "s1"}
	if journaled != scope || outputs.put != scope {
		t.Errorf("the journal labelled the change %+v and the output %+v, want %+v", journaled, outputs.put, scope)
	}
	if len(log.list) != 1 {
		t.Fatalf("%d audit records", len(log.list))
	}
	rec := log.list[0]
	if got := (tool.Identity{AgentID: rec.AgentID, SessionKey: rec.SessionKey, Channel: rec.Channel, Principal: rec.Principal, Owner: rec.Owner, Workspace: rec.Workspace}); got != (tool.Identity{AgentID: "main", SessionKey: "s1", Channel: "mcp", Principal: "alice", Owner: true, Workspace: real}) {
		t.Errorf("the audit record says the call was made by %+v", got)
	}
	var layers []string
	for _, v := range rec.Verdicts {
		layers = append(layers, v.Layer+" "+v.Decision)
	}
	if got := strings.Join(layers, ", "); got != "owner allow, agent main allow, channel mcp allow, subagent allow" {
		t.Errorf("the policy's layers: %s", got)
	}
	pr, _, err := r.Explain(ctx, call)
	if err != nil || pr.Caller != want {
		t.Errorf("Explain showed the policy a call by %+v (%v), want %+v", pr.Caller, err, want)
	}
	if r.Context().Identity != tc.Identity {
		t.Errorf("the runner's own identity changed: %+v", r.Context().Identity)
	}
}

// journalFunc is a journal that reports the context of every change.
type journalFunc func(ctx context.Context)

func (f journalFunc) Record(ctx context.Context, _ string, _ tool.FileChange) error {
	f(ctx)
	return nil
}

// scopedOutputs keeps outputs and notes the scope the last was kept for.
type scopedOutputs struct {
	tool.Outputs
	put tool.Scope
}

func (o *scopedOutputs) Put(ctx context.Context, callID, text string) error {
	o.put, _ = tool.ScopeFrom(ctx)
	return o.Outputs.Put(ctx, callID, text)
}
