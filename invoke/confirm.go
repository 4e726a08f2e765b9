package invoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Confirmation is what a person is shown to decide about a call.
type Confirmation struct {
	CallID string
	Tool   string
	// Args are the arguments the tool would run with.
	Args json.RawMessage
	Risk tool.Risk
	// Message explains what is asked: the tool's confirmation message or the
	// approval request's.
	Message string
	// RequestedBy says who wants the approval (a hook, a policy rule).
	RequestedBy string
	Context     *tool.Context
}

// Answer is a person's decision.
type Answer struct {
	// Allow lets the call run.
	Allow bool
	// Reason, for a denial, is passed on to the model.
	Reason string
	// By says who or what answered ("terminal", "--yes", a user name).
	By string
}

// DefaultConfirmTimeout is how long a person has to answer.
const DefaultConfirmTimeout = 2 * time.Minute

// confirmStep is the "confirm" step: a call that needs approval runs only if
// a person allows it. No confirmer, no answer in time, or an error: the call
// is blocked (fail closed).
func (r *Runner) confirmStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if req.Approval == nil {
			return next(ctx, req)
		}
		what := req.Approval.Message
		if what == "" {
			what = "requested by " + req.Approval.By
		}
		if r.confirmer == nil {
			return block(req, fmt.Sprintf("This call needs a person's approval (%s), but no one is available to approve it, so it was not run.", what))
		}
		c := Confirmation{
			CallID: req.Call.ID, Tool: req.Tool.Name, Args: req.Call.Arguments, Risk: req.Tool.Meta.Risk,
			Message: req.Approval.Message, RequestedBy: req.Approval.By, Context: req.Context,
		}
		if c.Message == "" {
			c.Message = req.Tool.Meta.ConfirmationMessage
		}
		cctx, cancel := context.WithTimeout(ctx, r.cfg.ConfirmTimeout)
		defer cancel()
		a, err := r.confirmer.Confirm(cctx, c)
		switch {
		case errors.Is(err, context.DeadlineExceeded) || err == nil && cctx.Err() != nil && ctx.Err() == nil:
			return block(req, fmt.Sprintf("No one approved this call within %s, so it was not run.", r.cfg.ConfirmTimeout))
		case err != nil:
			req.logger().Warn("asking for approval failed", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
			return block(req, "Asking for approval failed, so the call was not run.")
		case !a.Allow:
			reason := "The user denied this call."
			if a.Reason != "" {
				reason = "The user denied this call: " + a.Reason
			}
			return block(req, reason)
		}
		req.Note("approvedBy", a.By)
		return next(ctx, req)
	}
}
