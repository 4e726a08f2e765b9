package invoke

import (
	"context"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/tool"
)

// Auditor keeps the audit record of every call.
type Auditor interface {
	Append(ctx context.Context, r audit.Record) error
}

// WithAudit makes the runner record every call — blocked, denied and
// unknown ones included — with a.
func WithAudit(a Auditor) Option { return func(r *Runner) { r.auditor = a } }

// audit records a finished call and returns once the auditor has the
// record (for the store's writer: written to the database), so no result
// leaves the pipeline before its record. A failure to record is logged; the
// call's result stands.
func (r *Runner) audit(ctx context.Context, req *Request, res tool.Result) {
	if r.auditor == nil {
		return
	}
	tc := req.Context
	rec := audit.Record{
		Time: req.Started, CallID: req.Call.ID, ProviderCallID: req.Call.ProviderID, Tool: req.Tool.Name,
		AgentID: tc.AgentID, SessionKey: tc.SessionKey, Channel: tc.Channel, Principal: tc.Principal, Owner: tc.Owner, Workspace: req.Scope.Workspace,
		Provider: req.Provider, Arguments: req.Call.Arguments,
		Duration: time.Since(req.Started), IsError: res.IsError, DryRun: req.DryRun,
	}
	if req.Model != "" {
		rec.Provider += "/" + req.Model
	}
	for _, v := range req.Verdicts {
		rec.Verdicts = append(rec.Verdicts, audit.Verdict{Layer: v.Layer, Decision: v.Decision.String(), Rule: v.Rule})
	}
	if c := req.Confirmation; c != nil {
		rec.Confirmation = &audit.Confirmation{Asked: c.Asked, Answer: c.Answer, By: c.By, At: c.At, Reason: c.Reason}
	}
	for _, c := range res.Content {
		rec.ResultBytes += len(c.Text) + len(c.Data)
	}
	switch {
	case req.Outcome != "":
		rec.ErrorClass = string(req.Outcome)
	case res.IsError:
		rec.ErrorClass = string(OutcomeToolError)
	}
	if err := r.auditor.Append(context.WithoutCancel(ctx), rec); err != nil {
		r.log.Error("writing the audit record failed", "tool", rec.Tool, "call", rec.CallID, "err", err)
	}
}
