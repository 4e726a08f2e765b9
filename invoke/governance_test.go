package invoke_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// shellLike is a high-risk tool whose preview says what it would run, and
// lowers the risk of read-only commands — like exec.
type shellLike struct {
	runs    atomic.Int32
	env     string // what the preview reports as the environment
	program string // what it reports as the executable
	// files, covers and noAlways are what it reports as the workspace
	// hash, what "allow always" covers and why it is not offered.
	files, covers, noAlways string
	// approved is the effects the last call that ran was approved for.
	approved atomic.Pointer[tool.Effects]
}

func (s *shellLike) tool() tool.Tool {
	t := tool.Tool{
		Name: "run",
		Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"command": {Type: "string"}, "workdir": {Type: "string"},
		}, Required: []string{"command"}},
		Execute: func(ctx context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
			s.runs.Add(1)
			s.approved.Store(tool.ApprovedEffects(ctx))
			return tool.Text("ran " + string(call.Arguments)), nil
		},
		Preview: func(_ context.Context, call tool.Call, _ *tool.Context) (tool.Effects, error) {
			var in struct{ Command, Workdir string }
			_ = json.Unmarshal(call.Arguments, &in)
			e := tool.Effects{Summary: "run " + in.Command, Command: in.Command, Workdir: "/w/" + in.Workdir, Executable: s.program, Env: map[string]string{"MODE": s.env},
				WorkspaceHash: s.files, AlwaysCovers: s.covers, NoAlways: s.noAlways}
			if strings.HasPrefix(in.Command, "ls") {
				e.Risk = tool.RiskLow
			}
			return e, nil
		},
	}
	t.Meta.Risk = tool.RiskHigh
	return t
}

// asker counts confirmations and answers as told.
type asker struct {
	asked  []invoke.Confirmation
	answer invoke.Answer
}

func (a *asker) Confirm(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
	a.asked = append(a.asked, c)
	return a.answer, nil
}

func call(r *invoke.Runner, args string, opts ...invoke.CallOption) tool.ResultMessage {
	return r.Run(context.Background(), tool.Call{ID: "c", Name: "run", Arguments: json.RawMessage(args)}, opts...)
}

func TestHighRiskNeedsAPersonFailClosed(t *testing.T) {
	t.Parallel()
	s := &shellLike{program: "/bin/rm"}
	r := newRunner(t, []tool.Tool{s.tool()})
	msg := call(r, `{"command":"rm -rf build"}`)
	if !msg.IsError || !strings.Contains(text(msg), "needs a person's approval (high-risk call), but no one is available") || s.runs.Load() != 0 {
		t.Errorf("%q after %d runs", text(msg), s.runs.Load())
	}
	// The preview lowers a read-only command's risk: nobody is asked.
	if msg := call(r, `{"command":"ls -la"}`); msg.IsError || s.runs.Load() != 1 {
		t.Errorf("read-only command: %q", text(msg))
	}
}

func TestConfirmationFlow(t *testing.T) {
	t.Parallel()
	s := &shellLike{program: "/usr/bin/make", env: "dev"}
	a := &asker{answer: invoke.Answer{Allow: true, By: "alice"}}
	r := newRunner(t, []tool.Tool{s.tool()}, invoke.WithConfirmer(a))

	// What the person sees.
	call(r, `{"command":"make deploy","workdir":"app"}`)
	if len(a.asked) != 1 {
		t.Fatalf("asked %d times", len(a.asked))
	}
	c := a.asked[0]
	if c.Tool != "run" || c.Risk != tool.RiskHigh || c.Reason != "high-risk call" || c.Effects == nil ||
		c.Effects.Command != "make deploy" || c.Effects.Workdir != "/w/app" || c.Effects.Executable != "/usr/bin/make" || c.Fingerprint == "" {
		t.Errorf("confirmation %+v", c)
	}

	// Allow once, used twice: asked twice.
	call(r, `{"command":"make deploy","workdir":"app"}`)
	if len(a.asked) != 2 || s.runs.Load() != 2 {
		t.Errorf("allow-once reused: asked %d, runs %d", len(a.asked), s.runs.Load())
	}

	// Allow always: the same action again is not asked about...
	a.answer.Grant = invoke.GrantSession
	call(r, `{"command":"make deploy","workdir":"app"}`)
	a.answer.Grant = invoke.GrantOnce
	call(r, `{ "workdir" : "app", "command" : "make deploy" }`) // the same arguments, written differently
	if len(a.asked) != 3 || s.runs.Load() != 4 {
		t.Errorf("allow-always did not hold: asked %d, runs %d", len(a.asked), s.runs.Load())
	}
	// ...but any change asks again: an argument, the directory, the
	// environment, the program the command resolves to.
	call(r, `{"command":"make deploy-all","workdir":"app"}`)
	call(r, `{"command":"make deploy","workdir":"other"}`)
	s.env = "prod"
	call(r, `{"command":"make deploy","workdir":"app"}`)
	s.env, s.program = "dev", "/tmp/evil/make"
	call(r, `{"command":"make deploy","workdir":"app"}`)
	if len(a.asked) != 7 {
		t.Errorf("changed actions were not asked about: asked %d", len(a.asked))
	}

	// A denial's reason reaches the model, and the tool does not run.
	a.answer = invoke.Answer{Reason: "deploy after the review"}
	before := s.runs.Load()
	msg := call(r, `{"command":"make deploy","workdir":"app"}`)
	if text(msg) != `{"status":"blocked","tool":"run","reason":"The user denied this call: deploy after the review"}` || s.runs.Load() != before {
		t.Errorf("%q", text(msg))
	}
}

func TestConfirmationTimeoutAndRiskLevels(t *testing.T) {
	t.Parallel()
	slow := invoke.ConfirmFunc(func(ctx context.Context, _ invoke.Confirmation) (invoke.Answer, error) {
		<-ctx.Done()
		return invoke.Answer{}, ctx.Err()
	})
	s := &shellLike{}
	deny := newRunner(t, []tool.Tool{s.tool()}, invoke.WithConfirmer(slow), invoke.WithConfig(invoke.Config{ConfirmTimeout: 30 * time.Millisecond}))
	if msg := call(deny, `{"command":"make"}`); !strings.Contains(text(msg), "No one approved this call within 30ms") || s.runs.Load() != 0 {
		t.Errorf("timeout: %q", text(msg))
	}
	allow := newRunner(t, []tool.Tool{s.tool()}, invoke.WithConfirmer(slow), invoke.WithConfig(invoke.Config{ConfirmTimeout: 30 * time.Millisecond, ConfirmOnTimeout: "allow"}))
	if msg := call(allow, `{"command":"make"}`); msg.IsError || s.runs.Load() != 1 {
		t.Errorf("timeout configured to allow: %q", text(msg))
	}

	medium := fn("medium", echo) // no metadata: medium risk
	low := fn("low", echo)
	low.Meta.ReadOnly = true
	always := fn("always", echo)
	always.Meta.ReadOnly, always.Meta.RequiresConfirmation, always.Meta.ConfirmationMessage = true, true, "Sends an email."
	for _, tc := range []struct {
		name          string
		cfg           invoke.Config
		tool          string
		asked         bool
		reason, extra string
	}{
		{"medium not asked by default", invoke.Config{}, "medium", false, "", ""},
		{"medium asked when configured", invoke.Config{ConfirmMedium: true}, "medium", true, "medium-risk call", ""},
		{"low never asked", invoke.Config{ConfirmMedium: true}, "low", false, "", ""},
		{"metadata asks even for low risk", invoke.Config{}, "always", true, "the tool always asks", "Sends an email."},
	} {
		a := &asker{answer: invoke.Answer{Allow: true}}
		r := newRunner(t, []tool.Tool{medium, low, always}, invoke.WithConfirmer(a), invoke.WithConfig(tc.cfg))
		run(t, r, tc.tool, `{"path":"a"}`)
		if (len(a.asked) == 1) != tc.asked || tc.asked && (a.asked[0].Reason != tc.reason || a.asked[0].Message != tc.extra) {
			t.Errorf("%s: asked %+v", tc.name, a.asked)
		}
	}
}

func TestPolicyInThePipeline(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	for _, tt := range []tool.Tool{fn("read", echo), fn("write", echo), fn("apply_patch", echo), fn("cron", echo), fn("web_fetch", echo)} {
		tt.Meta.Source = tool.SourceCore
		if err := reg.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
	p := &policy.Policy{Tools: policy.Rules{
		Deny:       []string{"write"},
		Ask:        []policy.AskRule{{Tools: []string{"read"}, When: map[string][]string{"path": {"**/.env*"}}}},
		ByProvider: map[string]policy.Rules{"xai": {Deny: []string{"group:web"}}},
	}}
	a := &asker{answer: invoke.Answer{Allow: true, By: "bob"}}
	guest := invoke.New(reg, &tool.Context{Identity: tool.Identity{Channel: "discord"}}, invoke.WithPolicy(p), invoke.WithConfirmer(a))
	var offered []string
	for _, tt := range guest.Tools(nil) {
		offered = append(offered, tt.Name)
	}
	// write and apply_patch denied; cron owner-only; the rest offered.
	if !slices.Equal(offered, []string{"read", "web_fetch"}) {
		t.Errorf("offered %v", offered)
	}
	for _, tc := range []struct {
		tool, args, provider, want string
	}{
		{"write", `{"path":"a"}`, "", `{"status":"blocked","tool":"write","reason":"Tool write is not allowed here (global: deny write)."}`},
		{"apply_patch", `{"path":"a"}`, "", `{"status":"blocked","tool":"apply_patch","reason":"Tool apply_patch is not allowed here (global: deny write)."}`},
		{"cron", `{"path":"a"}`, "", `{"status":"blocked","tool":"cron","reason":"Tool restricted to owner senders."}`},
		{"web_fetch", `{"path":"a"}`, "xai", `{"status":"blocked","tool":"web_fetch","reason":"Tool web_fetch is not allowed here (provider xai: deny group:web)."}`},
		{"web_fetch", `{"path":"a"}`, "openai", `{"path":"a"}`},
		{"read", `{"path":"src/.env.local"}`, "", `{"path":"src/.env.local"}`},
	} {
		msg := guest.Run(context.Background(), tool.Call{ID: "c", Name: tc.tool, Arguments: json.RawMessage(tc.args)}, invoke.FromProvider(tc.provider))
		if text(msg) != tc.want {
			t.Errorf("%s via %q: %q", tc.tool, tc.provider, text(msg))
		}
	}
	if len(a.asked) != 1 || a.asked[0].Tool != "read" || !strings.Contains(a.asked[0].Reason, `ask read when path matches "**/.env*"`) {
		t.Errorf("ask rule: %+v", a.asked)
	}
	owner := invoke.New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, invoke.WithPolicy(p))
	if msg := owner.Run(context.Background(), tool.Call{ID: "c", Name: "cron", Arguments: json.RawMessage(`{"path":"a"}`)}); msg.IsError {
		t.Errorf("owner: %q", text(msg))
	}
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	s := &shellLike{program: "/usr/bin/rm", env: "x"}
	noPreview := fn("mutate", echo)
	reader := fn("look", echo)
	reader.Meta.ReadOnly = true
	r := newRunner(t, []tool.Tool{s.tool(), noPreview, reader})
	msg := call(r, `{"command":"rm -rf build"}`, invoke.DryRun())
	want := "Dry run of run — nothing was changed.\nIt would run rm -rf build.\n  command:     rm -rf build\n  directory:   /w/\n  environment: MODE=x\n  executable:  /usr/bin/rm"
	if msg.IsError || text(msg) != want || s.runs.Load() != 0 {
		t.Errorf("dry run:\n%s\nwant:\n%s", text(msg), want)
	}
	if d := msg.Details.(map[string]any); d["dryRun"] != true || d["effects"].(tool.Effects).Command != "rm -rf build" {
		t.Errorf("details %v", msg.Details)
	}
	if msg := r.Run(context.Background(), tool.Call{ID: "d", Name: "mutate", Arguments: json.RawMessage(`{"path":"a"}`)}, invoke.DryRun()); !msg.IsError || !strings.Contains(text(msg), "cannot describe what it would do") {
		t.Errorf("no preview: %q", text(msg))
	}
	if msg := r.Run(context.Background(), tool.Call{ID: "e", Name: "look", Arguments: json.RawMessage(`{"path":"a"}`)}, invoke.DryRun()); msg.IsError || text(msg) != `{"path":"a"}` {
		t.Errorf("read-only tool in a dry run: %q", text(msg))
	}
}

func TestFingerprintIsCanonical(t *testing.T) {
	t.Parallel()
	tc := &tool.Context{Identity: tool.Identity{Workspace: "/w"}}
	a := invoke.Fingerprint("exec", json.RawMessage(`{"b":1,"a":"x"}`), tc, nil)
	b := invoke.Fingerprint("exec", json.RawMessage(` { "a" : "x" , "b" : 1 } `), tc, nil)
	if a != b {
		t.Error("key order or spacing changed the fingerprint")
	}
	for name, other := range map[string]string{
		"tool":      invoke.Fingerprint("read", json.RawMessage(`{"a":"x","b":1}`), tc, nil),
		"args":      invoke.Fingerprint("exec", json.RawMessage(`{"a":"x","b":2}`), tc, nil),
		"workspace": invoke.Fingerprint("exec", json.RawMessage(`{"a":"x","b":1}`), &tool.Context{Identity: tool.Identity{Workspace: "/v"}}, nil),
		"script":    invoke.Fingerprint("exec", json.RawMessage(`{"a":"x","b":1}`), tc, &tool.Effects{ScriptHash: "abc"}),
		"diff":      invoke.Fingerprint("exec", json.RawMessage(`{"a":"x","b":1}`), tc, &tool.Effects{Diff: "-a\n+b\n"}),
		"files":     invoke.Fingerprint("exec", json.RawMessage(`{"a":"x","b":1}`), tc, &tool.Effects{WorkspaceHash: "abc"}),
		"always":    invoke.Fingerprint("exec", json.RawMessage(`{"a":"x","b":1}`), tc, &tool.Effects{AlwaysCovers: "abc"}),
	} {
		if other == a {
			t.Errorf("a change of %s kept the fingerprint", name)
		}
	}
}

// records collects audit records.
type records struct {
	mu   sync.Mutex
	list []audit.Record
}

func (r *records) Append(_ context.Context, rec audit.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec)
	return nil
}

func TestEveryCallIsAudited(t *testing.T) {
	t.Parallel()
	s := &shellLike{program: "/bin/rm"}
	log := &records{}
	p := &policy.Policy{Tools: policy.Rules{Deny: []string{"denied"}}}
	hooks := invoke.NewHooks()
	hooks.OnBefore("guard", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		return invoke.BeforeDecision{Block: c.Tool == "guarded", Reason: "no"}, nil
	})
	a := &asker{answer: invoke.Answer{Allow: true, By: "carol"}}
	r := newRunner(t, []tool.Tool{s.tool(), fn("echo", echo), fn("denied", echo), fn("guarded", echo)},
		invoke.WithAudit(log), invoke.WithPolicy(p), invoke.WithHooks(hooks), invoke.WithConfirmer(a))
	ctx := context.Background()
	r.Run(ctx, tool.Call{ID: "1", Name: "echo", Arguments: json.RawMessage(`{"path":"a"}`)}, invoke.FromProvider("openai/gpt-5"))
	r.Run(ctx, tool.Call{ID: "2", Name: "echo", Arguments: json.RawMessage(`{"path":[1]}`)})
	r.Run(ctx, tool.Call{ID: "3", Name: "denied", Arguments: json.RawMessage(`{"path":"a"}`)})
	r.Run(ctx, tool.Call{ID: "4", Name: "guarded", Arguments: json.RawMessage(`{"path":"a"}`)})
	r.Run(ctx, tool.Call{ID: "5", Name: "nope"})
	r.Run(ctx, tool.Call{ID: "6", Name: "run", Arguments: json.RawMessage(`{"command":"rm -rf x"}`)})
	r.Run(ctx, tool.Call{ID: "7", Name: "run", Arguments: json.RawMessage(`{"command":"rm -rf x"}`)}, invoke.DryRun())
	if len(log.list) != 7 {
		t.Fatalf("%d records", len(log.list))
	}
	byID := map[string]audit.Record{}
	for _, rec := range log.list {
		byID[rec.CallID] = rec
	}
	for id, want := range map[string]string{"1": "", "2": "validation", "3": "denied", "4": "blocked", "5": "unknown-tool", "6": "", "7": ""} {
		if rec := byID[id]; rec.ErrorClass != want || rec.IsError != (want != "") {
			t.Errorf("call %s: class %q isError %v, want %q", id, rec.ErrorClass, rec.IsError, want)
		}
	}
	if rec := byID["1"]; rec.Tool != "echo" || rec.Provider != "openai/gpt-5" || rec.ResultBytes == 0 || rec.Time.IsZero() {
		t.Errorf("record 1: %+v", rec)
	}
	if rec := byID["3"]; len(rec.Verdicts) == 0 || rec.Verdicts[0].Decision != "deny" || rec.Verdicts[0].Rule != "deny denied" {
		t.Errorf("record 3 verdicts: %+v", rec.Verdicts)
	}
	if c := byID["6"].Confirmation; c == nil || !c.Asked || c.Answer != "allow-once" || c.By != "carol" {
		t.Errorf("record 6 confirmation: %+v", c)
	}
	if rec := byID["7"]; !rec.DryRun || rec.Confirmation != nil {
		t.Errorf("record 7: %+v", rec)
	}
	// A denial is recorded with the person's reason.
	a.answer = invoke.Answer{By: "carol", Reason: "not on a Friday"}
	r.Run(ctx, tool.Call{ID: "8", Name: "run", Arguments: json.RawMessage(`{"command":"rm -rf y"}`)})
	if c := log.list[len(log.list)-1].Confirmation; c == nil || c.Answer != "deny" || c.By != "carol" || c.Reason != "not on a Friday" {
		t.Errorf("record 8 confirmation: %+v", c)
	}
}

// A denied tool's call is refused before its arguments are looked at: with
// arguments that would fail validation, the caller gets the denial, never
// the validation error that would show the schema.
func TestPolicyIsDecidedBeforeValidation(t *testing.T) {
	t.Parallel()
	s := &shellLike{}
	log := &records{}
	p := &policy.Policy{Tools: policy.Rules{Deny: []string{"run"}}, OwnerOnly: []string{"echo"}}
	r := newRunner(t, []tool.Tool{s.tool(), fn("echo", echo)}, invoke.WithPolicy(p), invoke.WithAudit(log))
	for _, tc := range []struct{ name, args, reason string }{
		{"run", `{"workdir":{"deep":1}}`, "not allowed here"},
		{"run", `[1,2]`, "not allowed here"},
		{"run", `"not an object"`, "not allowed here"},
		{"echo", `{"path":[1]}`, policy.OwnerOnlyReason},
	} {
		msg := r.Run(context.Background(), tool.Call{ID: "c", Name: tc.name, Arguments: json.RawMessage(tc.args)})
		got := text(msg)
		if !msg.IsError || !strings.Contains(got, `"status":"blocked"`) || !strings.Contains(got, tc.reason) {
			t.Errorf("%s %s: %q, want the policy's denial", tc.name, tc.args, got)
		}
		for _, leak := range []string{"command", "path", "Validation", "Missing", "JSON object"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s %s: the denial shows %q: %q", tc.name, tc.args, leak, got)
			}
		}
	}
	for _, rec := range log.list {
		if rec.ErrorClass != "denied" {
			t.Errorf("%s: audit class %q, want denied", rec.Tool, rec.ErrorClass)
		}
	}
	if s.runs.Load() != 0 {
		t.Errorf("the denied tool ran")
	}
}

// An unknown name's suggestions are tools the policy offers: a denied tool
// is not named, not even as the closest match.
func TestUnknownToolSuggestsOnlyOfferedTools(t *testing.T) {
	t.Parallel()
	p := &policy.Policy{Tools: policy.Rules{Deny: []string{"secret_dump"}}}
	r := newRunner(t, []tool.Tool{fn("secret_dump", echo), fn("secret_list", echo)}, invoke.WithPolicy(p))
	msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "secret_dumb"})
	if got := text(msg); !msg.IsError || strings.Contains(got, "secret_dump") || !strings.Contains(got, `\"secret_list\"`) {
		t.Errorf("unknown tool: %q", got)
	}
}

// A call made for a caller (invoke.WithCaller) runs, for policy, the audit
// log and the tool, as that caller: its session, channel, principal and
// owner flag.
func TestCallerOverridesTheContext(t *testing.T) {
	t.Parallel()
	log := &records{}
	var seen tool.Context
	who := tool.Tool{Name: "who", Parameters: &jsonschema.Schema{Type: "object"},
		Execute: func(_ context.Context, _ tool.Call, tc *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
			seen = *tc
			return tool.Text("ok"), nil
		}}
	p := &policy.Policy{OwnerOnly: []string{"who"}}
	reg := registry.New()
	if err := reg.Register(who); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Owner: true, Channel: "cli", SessionKey: "s0"}}, invoke.WithPolicy(p), invoke.WithAudit(log))
	// Not the owner: refused, though the runner's context says owner.
	ctx := invoke.WithCaller(context.Background(), tool.Identity{SessionKey: "s1", Channel: "mcp", Principal: "bob"})
	if msg := r.Run(ctx, tool.Call{ID: "1", Name: "who"}); !msg.IsError || !strings.Contains(text(msg), policy.OwnerOnlyReason) {
		t.Errorf("non-owner caller: %q", text(msg))
	}
	ctx = invoke.WithCaller(context.Background(), tool.Identity{SessionKey: "s2", Channel: "mcp", Principal: "alice", Owner: true})
	if msg := r.Run(ctx, tool.Call{ID: "2", Name: "who"}); msg.IsError {
		t.Errorf("owner caller: %q", text(msg))
	}
	if seen.SessionKey != "s2" || seen.Channel != "mcp" || seen.Principal != "alice" || !seen.Owner {
		t.Errorf("the tool saw %+v", seen)
	}
	if r.Context().SessionKey != "s0" || r.Context().Channel != "cli" {
		t.Errorf("the runner's own context changed: %+v", r.Context())
	}
	if len(log.list) != 2 {
		t.Fatalf("%d records", len(log.list))
	}
	for i, want := range []audit.Record{{SessionKey: "s1", Channel: "mcp", Principal: "bob"}, {SessionKey: "s2", Channel: "mcp", Principal: "alice", Owner: true}} {
		got := log.list[i]
		if got.SessionKey != want.SessionKey || got.Channel != want.Channel || got.Principal != want.Principal || got.Owner != want.Owner {
			t.Errorf("record %d: %+v, want %+v", i, got, want)
		}
	}
}

// memApprovals is an ApprovalStore in memory.
type memApprovals struct {
	mu  sync.Mutex
	set map[string]string // fingerprint → tool
}

func (m *memApprovals) Approved(_ context.Context, fp string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.set[fp]
	return ok, nil
}

func (m *memApprovals) Approve(_ context.Context, fp, tool, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set[fp] = tool
	return nil
}

// TestAlwaysCoversWhatThePreviewSays: the person is told what "allow
// always" covers — by default the exact action, else what the preview
// says; a preview's workspace hash binds it; when the preview says "always"
// is not offered, an "always" answer counts once and no earlier one
// holds. The call's context carries the effects it was approved for.
func TestAlwaysCoversWhatThePreviewSays(t *testing.T) {
	t.Parallel()
	s := &shellLike{program: "/usr/bin/make"}
	store := &memApprovals{set: map[string]string{}}
	a := &asker{answer: invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: "alice"}}
	reg := registry.New()
	if err := reg.Register(s.tool()); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, invoke.WithConfirmer(a), invoke.WithApprovalStore(store))
	call(r, `{"command":"rm -rf build"}`)
	if c := a.asked[0]; c.Always != "this exact action, in this workspace" || c.NoAlways != "" {
		t.Errorf("default: always %q, not offered %q", c.Always, c.NoAlways)
	}
	s.files, s.covers = "h1", "this command, while the workspace's files stay as they are now"
	call(r, `{"command":"make"}`)
	call(r, `{"command":"make"}`)
	if len(a.asked) != 2 || a.asked[1].Always != s.covers {
		t.Fatalf("asked %d times: %+v", len(a.asked), a.asked[len(a.asked)-1])
	}
	if e := s.approved.Load(); e == nil || e.WorkspaceHash != "h1" {
		t.Errorf("the call's context carries the effects %+v", e)
	}
	s.files = "h2" // a file of the workspace changed
	call(r, `{"command":"make"}`)
	if len(a.asked) != 3 {
		t.Errorf("a changed workspace was not asked about: asked %d", len(a.asked))
	}
	// Not offered: an earlier "always" for the same action does not hold,
	// and this one counts once.
	s.files, s.covers = "", ""
	call(r, `{"command":"make"}`) // allowed always
	s.noAlways = "the workspace has too many files"
	remembered := len(store.set)
	call(r, `{"command":"make"}`)
	call(r, `{"command":"make"}`)
	if len(a.asked) != 6 || a.asked[5].Always != "" || a.asked[5].NoAlways != s.noAlways || len(store.set) != remembered {
		t.Errorf("asked %d times, %d remembered (was %d): %+v", len(a.asked), len(store.set), remembered, a.asked[len(a.asked)-1])
	}
}

// TestBlanketApprovalIsNotBound: an answer that allows calls nobody saw
// (--yes) does not bind the call to its preview's effects, so a workspace
// changed by another call of the same turn does not stop it; a person's
// answer does.
func TestBlanketApprovalIsNotBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		confirmer invoke.Confirmer
		bound     bool
	}{
		{invoke.AutoApprove, false},
		{&asker{answer: invoke.Answer{Allow: true, By: "alice"}}, true},
	} {
		s := &shellLike{program: "/usr/bin/make", files: "h1", covers: "this command, while the workspace's files stay as they are now"}
		reg := registry.New()
		if err := reg.Register(s.tool()); err != nil {
			t.Fatal(err)
		}
		r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, invoke.WithConfirmer(tt.confirmer))
		if msg := call(r, `{"command":"make"}`); msg.IsError {
			t.Fatal(text(msg))
		}
		if e := s.approved.Load(); (e != nil) != tt.bound {
			t.Errorf("%T: the call's context carries the effects %+v, want bound %v", tt.confirmer, e, tt.bound)
		}
	}
}

// TestAllowAlwaysPersists: with an approval store, "allow always" holds for
// the next runner too (the next process), for the exact action only.
func TestAllowAlwaysPersists(t *testing.T) {
	t.Parallel()
	s := &shellLike{program: "/usr/bin/make", env: "dev"}
	store := &memApprovals{set: map[string]string{}}
	a := &asker{answer: invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: "alice"}}
	reg := registry.New()
	if err := reg.Register(s.tool()); err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}
	first := invoke.New(reg, tc, invoke.WithConfirmer(a), invoke.WithApprovalStore(store))
	if msg := call(first, `{"command":"make deploy"}`); msg.IsError || len(store.set) != 1 {
		t.Fatalf("%q, %d stored", text(msg), len(store.set))
	}
	b := &asker{answer: invoke.Answer{Allow: false, By: "bob"}}
	second := invoke.New(reg, tc, invoke.WithConfirmer(b), invoke.WithApprovalStore(store))
	if msg := call(second, `{"command":"make deploy"}`); msg.IsError || len(b.asked) != 0 {
		t.Errorf("the stored approval did not hold: %q, asked %d", text(msg), len(b.asked))
	}
	if msg := call(second, `{"command":"make clean"}`); !msg.IsError || len(b.asked) != 1 {
		t.Errorf("another action was not asked about: %q, asked %d", text(msg), len(b.asked))
	}
	// Without a store, a new runner asks again.
	third := invoke.New(reg, tc, invoke.WithConfirmer(b))
	if msg := call(third, `{"command":"make deploy"}`); !msg.IsError || len(b.asked) != 2 {
		t.Errorf("without a store: %q, asked %d", text(msg), len(b.asked))
	}
}

// undurable is an auditor whose records cannot be made durable: it keeps
// them, and says why.
type undurable struct{ records }

func (*undurable) Durable() error {
	return fmt.Errorf("%w: no space left on device", audit.ErrNotDurable)
}

// TestAuditStepFailsClosed: while the auditor says records cannot be made
// durable, a call that would change things is refused before it runs,
// with a message that says why and what still works; read-only calls and
// dry runs go on; AuditFailOpen runs them all. Every call is audited,
// refused ones as audit-unavailable.
func TestAuditStepFailsClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		tool     string
		dryRun   bool
		failOpen bool
		ran      bool
	}{
		{name: "a change is refused", tool: "change"},
		{name: "a read runs", tool: "look", ran: true},
		{name: "a dry run describes the change", tool: "change", dryRun: true},
		{name: "fail open runs a change", tool: "change", failOpen: true, ran: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran atomic.Bool
			run := func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
				ran.Store(true)
				return tool.Text("done"), nil
			}
			change := fn("change", run)
			change.Preview = func(context.Context, tool.Call, *tool.Context) (tool.Effects, error) {
				return tool.Effects{Summary: "change a file"}, nil
			}
			look := fn("look", run)
			look.Meta.ReadOnly = true
			log := &undurable{}
			r := newRunner(t, []tool.Tool{change, look}, invoke.WithAudit(log), invoke.WithConfig(invoke.Config{AuditFailOpen: tc.failOpen}))
			var opts []invoke.CallOption
			if tc.dryRun {
				opts = append(opts, invoke.DryRun())
			}
			msg := r.Run(context.Background(), tool.Call{ID: "c1", Name: tc.tool, Arguments: []byte(`{"path":"notes.txt"}`)}, opts...)
			if ran.Load() != tc.ran {
				t.Fatalf("the tool ran: %v; result %s", ran.Load(), text(msg))
			}
			if len(log.list) != 1 || log.list[0].CallID != "c1" {
				t.Fatalf("audit records %+v", log.list)
			}
			if tc.ran || tc.dryRun {
				if msg.IsError {
					t.Errorf("result %s", text(msg))
				}
				return
			}
			env, ok := tool.ParseEnvelope(text(msg))
			want := "change was not run: it changes things, and audit records cannot be made durable: no space left on device — no change is made without its audit record. Read-only tools still work"
			if !msg.IsError || !ok || env.Status != "blocked" || !strings.HasPrefix(env.Reason, want) {
				t.Errorf("result %s, want blocked: %s…", text(msg), want)
			}
			if c := log.list[0].ErrorClass; c != "audit-unavailable" {
				t.Errorf("recorded as %q, want audit-unavailable", c)
			}
		})
	}
}
