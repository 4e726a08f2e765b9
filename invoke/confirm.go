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
	// Fingerprint identifies the exact action; an "allow always" answer
	// holds for this fingerprint only.
	Fingerprint string
	// Always says what an "allow always" answer would cover, for the
	// person asked ("this exact action, in this workspace", or what the
	// tool's preview says); it is "" when "always" is not offered, and
	// NoAlways then says why.
	Always, NoAlways string
	// Caller is who asks for the call, and in which workspace: the call's
	// identity, as policy and the audit log see it.
	Caller tool.Identity
}

// Answer is a person's decision.
type Answer struct {
	// Allow lets the call run; Always also lets every later call with the
	// same fingerprint run without asking: in this session, and for good
	// when the runner has an [ApprovalStore].
	Allow, Always bool
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
	// Answer is "allow-once", "allow-always", "allowed-before" (an earlier
	// allow-always held), "deny", "timeout", "pending" (the question went to
	// someone who answers later) or "none" (nobody to ask).
	Answer string
	By     string
	At     time.Time
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

// DefaultConfirmTimeout is how long a person has to answer.
const DefaultConfirmTimeout = 2 * time.Minute

// approvals remembers the fingerprints a person allowed always, for the
// runner's session.
type approvals struct {
	mu  sync.Mutex
	set map[string]bool
}

func (a *approvals) has(fp string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.set[fp]
}

func (a *approvals) add(fp string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.set == nil {
		a.set = map[string]bool{}
	}
	a.set[fp] = true
}

// ApprovalStore keeps "allow always" answers beyond the runner's life, so
// that the exact action a person allowed always is not asked about again
// (store.Approvals keeps them per workspace).
type ApprovalStore interface {
	Approved(ctx context.Context, fingerprint string) (bool, error)
	Approve(ctx context.Context, fingerprint, tool, by string) error
}

// approved reports whether fp was allowed always, in this runner's session
// or, with an approval store, before.
func (r *Runner) approved(ctx context.Context, req *Request, fp string) bool {
	if r.approvals.has(fp) {
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
	if ok {
		r.approvals.add(fp)
	}
	return ok
}

// confirmStep is the "confirm" step. The tool's preview (when it has one)
// gives the call's effects and risk. A person is asked when a hook or an ask
// rule requires approval, when the tool always asks, or when the risk is high
// (or medium, if configured); low risk never asks. The call runs only if
// they allow it: no confirmer, an error, or no answer in time blocks it (fail
// closed, unless ConfirmOnTimeout is "allow"). "Allow always" holds for the
// exact action — the same fingerprint — for the rest of the session, and
// for good with an [ApprovalStore]; a preview may say what that covers, or
// that "always" is not offered (then no earlier "always" holds and an
// "always" answer counts once). An approved call's context carries the
// effects it was approved for. Dry runs are never asked about: nothing
// runs.
func (r *Runner) confirmStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if req.DryRun {
			return next(ctx, req)
		}
		req.Risk = req.Tool.Meta.Risk
		e, err := req.preview(ctx)
		if err != nil {
			return ErrorResult(req.Tool, err) // the call itself would fail the same way
		}
		if e != nil && e.Risk != tool.RiskUnset {
			req.Risk = e.Risk
		}
		why := r.needsConfirmation(req)
		if why == "" {
			return next(tool.WithApproval(ctx, tool.ApprovalUnasked), req)
		}
		fp := Fingerprint(req.Tool.Name, req.Call.Arguments, req.Context, req.Effects)
		always, noAlways := alwaysOf(req.Effects)
		now := time.Now()
		if always != "" && r.approved(ctx, req, fp) {
			req.Confirmation = &ConfirmRecord{Answer: "allowed-before", At: now}
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
			Always: always, NoAlways: noAlways, Caller: req.Context.Identity,
		}
		if req.Approval != nil && req.Approval.Message != "" {
			c.Message = req.Approval.Message
		}
		cctx, cancel := context.WithTimeout(ctx, r.cfg.ConfirmTimeout)
		defer cancel()
		a, err := r.confirmer.Confirm(cctx, c)
		req.Confirmation = &ConfirmRecord{Asked: true, By: a.By, At: time.Now()}
		var none *NoOneToAsk
		switch {
		case ctx.Err() != nil:
			req.Confirmation.Answer = "none"
			req.Outcome = OutcomeCancelled
			return tool.Errorf("Tool %s was cancelled while waiting for approval.", req.Tool.Name)
		case cctx.Err() != nil:
			req.Confirmation.Answer = "timeout"
			if r.cfg.ConfirmOnTimeout == "allow" {
				return next(tool.WithApproval(ctx, tool.ApprovalGiven), req) // nobody saw it
			}
			req.Outcome = OutcomeDenied
			return block(req, fmt.Sprintf("No one approved this call within %s, so it was not run.", r.cfg.ConfirmTimeout))
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
		if a.Always && always != "" {
			req.Confirmation.Answer = "allow-always"
			r.approvals.add(fp)
			if r.approvalStore != nil {
				if err := r.approvalStore.Approve(ctx, fp, req.Tool.Name, a.By); err != nil {
					req.logger().Warn("remembering an approval", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
				}
			}
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
