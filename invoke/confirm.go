package invoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// Confirmer asks a person whether a call may run.
type Confirmer interface {
	Confirm(ctx context.Context, c Confirmation) (Answer, error)
}

// ConfirmFunc is a Confirmer made of a function, for embedding programs.
type ConfirmFunc func(ctx context.Context, c Confirmation) (Answer, error)

// Confirm calls f.
func (f ConfirmFunc) Confirm(ctx context.Context, c Confirmation) (Answer, error) { return f(ctx, c) }

// AutoApprove allows every call once, answering as "auto"; the CLI's --yes
// uses it, so the audit log shows that nobody was asked.
var AutoApprove Confirmer = ConfirmFunc(func(context.Context, Confirmation) (Answer, error) {
	return Answer{Allow: true, Blanket: true, By: "auto (--yes)"}, nil
})

// Grant is how far an answer that allows a call reaches.
type Grant int

const (
	// GrantOnce allows this call only.
	GrantOnce Grant = iota
	// GrantSession also allows later calls of the same action in the
	// caller's session (its identity's session key), for as long as the
	// runner lives: it is kept in memory only, so another session or
	// process asks again.
	GrantSession
	// GrantWorkspace also allows later calls of the same action in the
	// workspace, in any session and process, until it is revoked: it is
	// kept in the runner's [ApprovalStore] (without one, it holds as
	// GrantSession does).
	GrantWorkspace
	// GrantRule also allows the later calls that the rule the
	// confirmation proposes ([Confirmation.Rule]) matches, in the
	// workspace, in any session and process, until it is revoked: the
	// rule is saved in the runner's [RuleStore] (without one, or when no
	// rule was proposed, it counts once).
	GrantRule
)

// Confirmation is what a person is shown to decide about a call.
type Confirmation struct {
	CallID string
	Tool   string
	// Args are the arguments the tool would run with.
	Args json.RawMessage
	// Risk is the call's risk: the tool's, or the one its preview gives for
	// these arguments.
	Risk tool.Risk
	// Reason says why a person is asked ("high risk", an ask rule, a hook).
	Reason string
	// Message is the tool's confirmation message, or the approval request's.
	Message string
	// Effects are what the call would do, when the tool can say.
	Effects *tool.Effects
	// Fingerprint identifies the exact action; an answer for this session
	// or this workspace holds for this fingerprint only.
	Fingerprint string
	// Always says what an answer for this session or this workspace would
	// cover, for the person asked ("this exact action, in this
	// workspace", or what the tool's preview says); it is "" when only
	// "once" is offered, and NoAlways then says why.
	Always, NoAlways string
	// Rule is the allow rule a person may save for the workspace instead
	// ("exec(npm run test:*)", see [policy.Policy.Propose]), shown to them
	// as it would be saved; "" when none is offered.
	Rule string
	// Caller is who asks for the call, and in which workspace: the call's
	// identity, as policy and the audit log see it.
	Caller tool.Identity
}

// Answer is a person's decision.
type Answer struct {
	// Allow lets the call run; Grant says whether later calls with the
	// same fingerprint run without asking too, and where. A grant beyond
	// once counts once when the confirmation offered none (Always "").
	Allow bool
	Grant Grant
	// Blanket says the answer allows calls without anyone seeing them
	// (--yes, a fallback that allows): it is not bound to what the call's
	// preview said, so the call does not check, as it starts, that its
	// effects still hold (see [tool.ApprovedEffects]).
	Blanket bool
	// Reason, for a denial, is passed on to the model.
	Reason string
	// By says who or what answered ("terminal", "--yes", a user name).
	By string
}

// ConfirmRecord is what happened about confirmation for one call, for the
// audit log.
type ConfirmRecord struct {
	Asked bool
	// Answer is "allow-once", "allow-session", "allow-workspace",
	// "allow-rule" (the proposed rule was saved for the workspace),
	// "allowed-before" (an earlier answer for the session or workspace
	// held), "allowed-by-rule" (an allow rule on arguments, of the
	// configuration or saved for the workspace, approved it in advance),
	// "deny", "timeout", "pending" (the question went to someone who
	// answers later), "none" (nobody to ask), or AnswerModeAllow or
	// AnswerModeDeny (the permission mode answered, By names it).
	Answer string
	By     string
	At     time.Time
	// Rule is the saved rule that allowed the call ("allowed-by-rule"),
	// or the rule the person saved with their answer ("allow-rule").
	Rule string
	// Reason is what the person gave as the reason for a denial.
	Reason string
}

// ErrPending, returned (wrapped) by a Confirmer, says the question was handed
// to someone who answers later — an MCP client that asks its user and calls
// again with the answer. The call ends with a "pending" envelope instead of
// being blocked.
var ErrPending = errors.New("approval pending")

// NoOneToAsk, returned (wrapped) by a Confirmer, says nobody can be asked
// for this call — an MCP client that cannot put questions to its user. The
// call is blocked as it is without a confirmer, and Why is passed on.
type NoOneToAsk struct{ Why string }

func (e *NoOneToAsk) Error() string { return "no one can be asked: " + e.Why }

// NoAnswer, returned (wrapped) by a Confirmer, says the question was put
// where someone could answer it (Where: "in the console"), but nobody did
// within its time. The call ends as one nobody answered in
// Config.ConfirmTimeout does: blocked, unless ConfirmOnTimeout is "allow".
type NoAnswer struct {
	Where  string
	Within time.Duration
}

func (e *NoAnswer) Error() string { return noAnswer(e.Where, e.Within) }

// noAnswer says that nobody approved a call where within d.
func noAnswer(where string, d time.Duration) string {
	if where != "" {
		where = " " + where
	}
	return fmt.Sprintf("No one approved this call%s within %s, so it was not run.", where, d)
}

// Patient is a Confirmer that may wait longer for an answer than
// Config.ConfirmTimeout — a console, whose people decide in their own
// time: the runner gives it Patience to answer instead, when that is
// longer. It says itself when nobody answered (NoAnswer).
type Patient interface {
	Confirmer
	Patience() time.Duration
}

// DefaultConfirmTimeout is how long a person has to answer.
const DefaultConfirmTimeout = 2 * time.Minute

// approvals remembers the actions allowed for a session (GrantSession):
// the fingerprints by session key.
type approvals struct {
	mu  sync.Mutex
	set map[approval]bool
}

type approval struct{ session, fp string }

func (a *approvals) has(k approval) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.set[k]
}

func (a *approvals) add(k approval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.set == nil {
		a.set = map[approval]bool{}
	}
	a.set[k] = true
}

// ApprovalStore keeps the answers for a workspace (GrantWorkspace) beyond
// the runner's life, so that the exact action a person allowed there is
// not asked about again (store.Approvals keeps them per workspace). It is
// read at every call that needs approval, so a revocation holds at once,
// also in a process that is running.
type ApprovalStore interface {
	Approved(ctx context.Context, fingerprint string) (bool, error)
	Approve(ctx context.Context, fingerprint, tool, by string) error
}

// RuleStore keeps the allow rules people saved for a workspace from an
// approval (store.Approvals keeps them per workspace). They are read at
// every call that needs approval and applied as the policy's "workspace"
// layer ([policy.Request.Saved]): like any allow, they never override a
// deny or an ask rule, and a revocation holds at once.
type RuleStore interface {
	Rules(ctx context.Context) ([]string, error)
	SaveRule(ctx context.Context, rule, tool, by string) error
}

// savedRule returns the rule saved for the workspace that approves the
// call in advance, "" when none does. A call an ask rule or a hook asks
// about is not approved by one.
func (r *Runner) savedRule(ctx context.Context, req *Request) string {
	if req.Approval != nil {
		return ""
	}
	p, pr, ok := r.savedRequest(ctx, req)
	if !ok {
		return ""
	}
	if d := p.Decide(pr); d.Preapproved && d.DecidedBy.Layer == "workspace" {
		return strings.TrimPrefix(d.DecidedBy.Rule, "allow ") // the layer's verdicts are "allow REF"
	}
	return ""
}

// savedRequest describes the call to the policy with the rules saved for
// the workspace (see [Runner.ruleRequest]); false when there are none (or
// no rule store, or they cannot be read).
func (r *Runner) savedRequest(ctx context.Context, req *Request) (*policy.Policy, policy.Request, bool) {
	if r.ruleStore == nil {
		return nil, policy.Request{}, false
	}
	saved, err := r.ruleStore.Rules(ctx)
	if err != nil {
		req.logger().Warn("reading the saved rules; asking instead", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
		return nil, policy.Request{}, false
	}
	if len(saved) == 0 {
		return nil, policy.Request{}, false
	}
	p, pr := r.ruleRequest(ctx, req)
	pr.Saved = saved
	return p, pr, true
}

// proposeRule returns the rule a person may save when asked about the
// call, "" when none is offered: without a rule store, for a call an ask
// rule or a hook asks about (an allow would not override it), or one
// whose preview offers only "once".
func (r *Runner) proposeRule(ctx context.Context, req *Request, noAlways string) string {
	if r.ruleStore == nil || req.Approval != nil || noAlways != "" {
		return ""
	}
	p, pr := r.ruleRequest(ctx, req)
	return p.Propose(pr)
}

// ruleRequest describes the call to the policy with everything a rule on
// arguments looks at — its arguments, files and programs — whatever rules
// the runner's policy has (an empty one when it has none).
func (r *Runner) ruleRequest(ctx context.Context, req *Request) (*policy.Policy, policy.Request) {
	p := r.policy.Snapshot()
	if p == nil {
		p = &policy.Policy{}
	}
	args, err := req.Args()
	if err != nil {
		args = map[string]any{}
	}
	pr := policyRequest(req.Context.Identity, req.Tool.Meta, args, req.Provider, req.Model)
	pr.Files, pr.FilesListed = req.files(ctx)
	pr.Programs, pr.ProgramsListed = req.programs(ctx)
	return p, pr
}

// approved reports whether fp was allowed for the call's session, or in
// its workspace (with an approval store).
func (r *Runner) approved(ctx context.Context, req *Request, fp string) bool {
	if r.approvals.has(approval{req.Scope.Session, fp}) {
		return true
	}
	if r.approvalStore == nil {
		return false
	}
	ok, err := r.approvalStore.Approved(ctx, fp)
	if err != nil {
		req.logger().Warn("reading approvals; asking instead", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
		return false
	}
	return ok
}

// grant remembers that a allowed the action fp (or the calls rule, the
// proposed rule, matches) as far as its grant reaches, and returns the
// audit log's word for the answer.
func (r *Runner) grant(ctx context.Context, req *Request, fp, rule string, a Answer) string {
	switch {
	case a.Grant == GrantWorkspace && r.approvalStore != nil:
		if err := r.approvalStore.Approve(ctx, fp, req.Tool.Name, a.By); err != nil {
			req.logger().Warn("remembering an approval for the workspace; it holds for this session only", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
			r.approvals.add(approval{req.Scope.Session, fp})
			return "allow-session"
		}
		return "allow-workspace"
	case a.Grant == GrantRule && rule != "":
		if err := r.ruleStore.SaveRule(ctx, rule, req.Tool.Name, a.By); err != nil {
			req.logger().Warn("saving a rule for the workspace; the call is allowed once", "tool", req.Tool.Name, "call", req.Call.ID, "rule", rule, "err", err)
			return "allow-once"
		}
		req.Confirmation.Rule = rule
		return "allow-rule"
	case a.Grant == GrantWorkspace, a.Grant == GrantSession:
		r.approvals.add(approval{req.Scope.Session, fp})
		return "allow-session"
	}
	return "allow-once"
}

// need is what the confirm step works out about a call before anyone is
// asked: why a person must be asked ("" when not), the action's
// fingerprint, what a grant beyond once would cover (or why none is
// offered), and whether an earlier grant holds.
type need struct {
	why, fp, always, noAlways string
	before                    bool
	// saved is the rule saved for the workspace that approves the call
	// (see [Runner.savedRule]); rule the one it proposes to save.
	saved, rule string
}

// need works out the call's need for approval; res is the error result
// of a preview that failed.
func (r *Runner) need(ctx context.Context, req *Request) (n need, res tool.Result) {
	req.Risk = req.Tool.Meta.Risk
	e, err := req.preview(ctx)
	if err != nil {
		return n, ErrorResult(req.Tool, err) // the call itself would fail the same way
	}
	if e != nil && e.Risk != tool.RiskUnset {
		req.Risk = e.Risk
	}
	if n.why = r.needsConfirmation(req); n.why == "" {
		return n, tool.Result{}
	}
	n.fp = Fingerprint(req.Tool.Name, req.Call.Arguments, req.Context, req.Effects)
	n.always, n.noAlways = alwaysOf(req.Effects)
	n.before = n.always != "" && r.approved(ctx, req, n.fp)
	if !n.before && !req.preapproved {
		if n.saved = r.savedRule(ctx, req); n.saved == "" {
			n.rule = r.proposeRule(ctx, req, n.noAlways)
		}
	}
	return n, tool.Result{}
}

// NeedsApproval says why call would need a person's approval, "" when it
// would not (or an earlier grant holds, or the permission mode answers in
// a person's place), as the pipeline would work it out — the arguments
// normalized and validated, the policy decided, the tool's preview asked,
// the mode applied — without running the call, asking anyone, running
// hooks (an approval a hook would ask for is not foreseen) or recording
// anything. The error says why the call would not get that far: an unknown
// tool, invalid arguments, a policy that denies it, a mode that refuses
// it (plan, dontAsk).
func (r *Runner) NeedsApproval(ctx context.Context, call tool.Call, opts ...CallOption) (string, error) {
	ctx, req, rt, res := r.request(ctx, call, opts)
	if rt == nil {
		return "", stopped(res)
	}
	var why string
	var denied error
	modeRefuses := func(refusal string) { denied = fmt.Errorf("the permission mode refuses it: %s", refusal) }
	check := func(ctx context.Context, req *Request) tool.Result {
		if r.policy != nil {
			p := r.policy.Snapshot()
			d := p.Decide(r.callRequest(ctx, p, req))
			switch d.Decision {
			case policy.Deny:
				denied = fmt.Errorf("the policy denies it: %s", d.Reason)
				return tool.Result{}
			case policy.Ask:
				req.Approval = &Approval{By: "policy (" + d.Reason + ")"}
			}
			if d.Preapproved {
				return tool.Result{}
			}
		}
		if refusal := planRefusal(ctx, req); refusal != "" {
			modeRefuses(refusal)
			return tool.Result{}
		}
		n, res := r.need(ctx, req)
		if res.IsError || n.before || n.saved != "" || n.why == "" {
			return res
		}
		switch refusal, answered := modeAnswer(ctx, req, n.why); {
		case !answered:
			why = n.why
		case refusal != "":
			modeRefuses(refusal)
		}
		return res
	}
	if res := Arguments(r.normalizeStep(Validate(check)))(ctx, req); res.IsError {
		return "", stopped(res)
	}
	return why, denied
}

// confirmStep is the "confirm" step. The tool's preview (when it has one)
// gives the call's effects and risk. A person is asked when a hook or an ask
// rule requires approval, when the tool always asks, or when the risk is high
// (or medium, if configured); low risk never asks. The call runs only if
// they allow it: no confirmer, an error, or no answer in time blocks it (fail
// closed, unless ConfirmOnTimeout is "allow"). An answer for this session
// or this workspace (see [Grant]) holds for the exact action — the same
// fingerprint; a preview may say what that covers, or that only "once" is
// offered (then no earlier grant holds and a wider answer counts once). An approved call's context carries the
// effects it was approved for. Dry runs are never asked about: nothing
// runs. The call's permission mode (see WithModes) may refuse it first
// (plan) or answer in a person's place (acceptEdits, dontAsk, bypass).
func (r *Runner) confirmStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if req.DryRun {
			return next(ctx, req)
		}
		if refusal := planRefusal(ctx, req); refusal != "" {
			modeAnswered(req, refusal)
			return block(req, refusal)
		}
		ctx = tool.WithAsker(ctx, r.asker(req))
		n, res := r.need(ctx, req)
		if res.IsError {
			return res
		}
		why, fp, always, noAlways := n.why, n.fp, n.always, n.noAlways
		if why == "" {
			return next(tool.WithApproval(ctx, tool.ApprovalUnasked), req)
		}
		now := time.Now()
		if req.preapproved && req.Approval == nil {
			req.Confirmation = &ConfirmRecord{Answer: "allowed-by-rule", By: "policy", At: now}
			return next(approvedFor(ctx, req), req)
		}
		if n.before {
			req.Confirmation = &ConfirmRecord{Answer: "allowed-before", At: now}
			return next(approvedFor(ctx, req), req)
		}
		if n.saved != "" {
			req.Confirmation = &ConfirmRecord{Answer: "allowed-by-rule", By: "saved rule", At: now, Rule: n.saved}
			return next(approvedFor(ctx, req), req)
		}
		if refusal, ok := modeAnswer(ctx, req, why); ok {
			modeAnswered(req, refusal)
			if refusal != "" {
				return block(req, refusal)
			}
			return next(approvedFor(ctx, req), req)
		}
		switch decision, res, stop := r.askHooks(ctx, req, why); {
		case stop:
			return res
		case decision == PermissionAllow:
			return next(approvedFor(ctx, req), req)
		}
		if r.confirmer == nil {
			req.Confirmation = &ConfirmRecord{Answer: "none", At: now}
			req.Outcome = OutcomeDenied
			return block(req, fmt.Sprintf("This call needs a person's approval (%s), but no one is available to approve it, so it was not run.", why))
		}
		c := Confirmation{
			CallID: req.Call.ID, Tool: req.Tool.Name, Args: req.Call.Arguments, Risk: req.Risk, Reason: why,
			Message: req.Tool.Meta.ConfirmationMessage, Effects: req.Effects, Fingerprint: fp,
			Always: always, NoAlways: noAlways, Rule: n.rule, Caller: req.Context.Identity,
		}
		if req.Approval != nil && req.Approval.Message != "" {
			c.Message = req.Approval.Message
		}
		a, late, err := r.put(ctx, c)
		req.Confirmation = &ConfirmRecord{Asked: true, By: a.By, At: time.Now()}
		var none *NoOneToAsk
		switch {
		case ctx.Err() != nil:
			req.Confirmation.Answer = "none"
			req.Outcome = OutcomeCancelled
			return tool.Errorf("Tool %s was cancelled while waiting for approval.", req.Tool.Name)
		case late != nil:
			req.Confirmation.Answer = "timeout"
			if r.cfg.ConfirmOnTimeout == "allow" {
				return next(tool.WithApproval(ctx, tool.ApprovalGiven), req) // nobody saw it
			}
			req.Outcome = OutcomeDenied
			return block(req, late.Error())
		case errors.As(err, &none):
			req.Confirmation.Asked, req.Confirmation.Answer = false, "none"
			req.Outcome = OutcomeDenied
			return block(req, fmt.Sprintf("This call needs a person's approval (%s), but no one is available to approve it (%s), so it was not run.", why, none.Why))
		case errors.Is(err, ErrPending):
			req.Confirmation.Answer = "pending"
			req.Outcome = OutcomePending
			return tool.Envelope{Status: "pending", Tool: req.Tool.Name, Message: "This call waits for a person's approval (" + why + ")."}.Result()
		case err != nil:
			req.logger().Warn("asking for approval failed", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
			req.Confirmation.Answer = "none"
			req.Outcome = OutcomeDenied
			return block(req, "Asking for approval failed, so the call was not run.")
		case !a.Allow:
			req.Confirmation.Answer, req.Confirmation.Reason = "deny", a.Reason
			req.Outcome = OutcomeDenied
			reason := "The user denied this call."
			if a.Reason != "" {
				reason = "The user denied this call: " + a.Reason
			}
			return block(req, reason)
		}
		req.Confirmation.Answer = "allow-once"
		if always != "" || a.Grant == GrantRule {
			req.Confirmation.Answer = r.grant(ctx, req, fp, n.rule, a)
		}
		if a.Blanket {
			return next(tool.WithApproval(ctx, tool.ApprovalGiven), req)
		}
		return next(approvedFor(ctx, req), req)
	}
}

// approvedFor marks ctx as the context of a call a person approved, for the
// effects its preview described: the tool checks that they still hold
// when it starts (see [tool.ApprovedEffects]).
func approvedFor(ctx context.Context, req *Request) context.Context {
	ctx = tool.WithApproval(ctx, tool.ApprovalGiven)
	if req.Effects != nil {
		ctx = tool.WithApprovedEffects(ctx, req.Effects)
	}
	return ctx
}

// alwaysOf says what an "allow always" answer to a call with effects e
// covers, or, when the preview offers none, why not.
func alwaysOf(e *tool.Effects) (always, noAlways string) {
	switch {
	case e != nil && e.NoAlways != "":
		return "", e.NoAlways
	case e != nil && e.AlwaysCovers != "":
		return e.AlwaysCovers, ""
	}
	return "this exact action, in this workspace", ""
}

// needsConfirmation says why a person must be asked, or "" when not.
func (r *Runner) needsConfirmation(req *Request) string {
	switch {
	case req.Approval != nil && req.Approval.Message != "":
		return "requested by " + req.Approval.By + ": " + req.Approval.Message
	case req.Approval != nil:
		return "requested by " + req.Approval.By
	case req.Tool.Meta.RequiresConfirmation:
		return "the tool always asks"
	case req.Risk == tool.RiskHigh:
		if req.Effects != nil && req.Effects.RiskReason != "" {
			return "high-risk call: " + req.Effects.RiskReason
		}
		return "high-risk call"
	case req.Risk == tool.RiskMedium && r.cfg.ConfirmMedium:
		return "medium-risk call"
	}
	return ""
}

// Fingerprint identifies an exact action: the tool, its arguments in
// canonical form (keys sorted), the workspace, and what the preview says the
// call would do — the diff it would make, the working directory,
// environment, resolved executable, script hash and hash of the workspace's
// files it would run with, and what "allow always" covers. Any change gives
// another fingerprint, so "allow always" for an edit does not carry over
// once the file has changed, nor for a build once a file of the workspace
// has.
func Fingerprint(name string, args json.RawMessage, tc *tool.Context, e *tool.Effects) string {
	h := sha256.New()
	field := func(k, v string) { fmt.Fprintf(h, "%s=%d:%s\n", k, len(v), v) }
	field("tool", name)
	field("args", canonicalJSON(args))
	if tc != nil {
		field("workspace", tc.Workspace)
	}
	if e != nil {
		field("workdir", e.Workdir)
		field("command", e.Command)
		for _, k := range slices.Sorted(maps.Keys(e.Env)) {
			field("env "+k, e.Env[k])
		}
		field("executable", e.Executable)
		for _, p := range e.Programs {
			field("program "+p.Name, p.Path)
		}
		field("unsummarized", e.Unsummarized)
		field("script", e.ScriptHash)
		field("workspace files", e.WorkspaceHash)
		field("always", e.AlwaysCovers)
		field("diff", e.Diff)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-encodes JSON with sorted keys and no spaces, so the same
// arguments written differently fingerprint alike.
func canonicalJSON(raw json.RawMessage) string {
	v, err := decodeObject(raw)
	if err != nil {
		return strings.TrimSpace(string(raw))
	}
	b, err := json.Marshal(v) // maps encode with sorted keys
	if err != nil {
		return string(raw)
	}
	return string(b)
}
