package invoke

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/tool"
)

// Auditor keeps the audit record of every call.
type Auditor interface {
	Append(ctx context.Context, r audit.Record) error
}

// DurableAuditor is an Auditor that can tell whether the record of a call
// made now would be durable before Append returns (auditlog.Spool and
// auditlog.Writer can: not while the disk is full or the database cannot be
// written).
type DurableAuditor interface {
	Auditor
	// Durable returns nil when records are made durable now, and why not
	// otherwise.
	Durable() error
}

// WithAudit makes the runner record every call — blocked, denied and
// unknown ones included — with a. When a is a DurableAuditor, calls that
// change things are refused while it says records cannot be made durable
// (the "audit" step; Config.AuditFailOpen runs them anyway).
func WithAudit(a Auditor) Option { return func(r *Runner) { r.auditor = a } }

// auditStep is the "audit" step: while the auditor says records cannot be
// made durable, a call that would change anything is refused before it
// runs — a change must not happen without its record (fail closed). Calls
// of read-only tools and dry runs go on: their records wait in the
// auditor's memory until they can be written.
func (r *Runner) auditStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		d, ok := r.auditor.(DurableAuditor)
		if !ok || r.cfg.AuditFailOpen || req.Tool.Meta.ReadOnly || req.DryRun {
			return next(ctx, req)
		}
		if err := d.Durable(); err != nil {
			req.Outcome = OutcomeAuditDown
			return block(req, fmt.Sprintf("%s was not run: it changes things, and %v — no change is made without its audit record. Read-only tools still work; try this call again later (whoever runs toolbelt is told, and can free space where it keeps its data).", req.Tool.Name, err))
		}
		return next(ctx, req)
	}
}

// AuditNoter is implemented by a result's details that say what the
// audit record of the call keeps of its result besides its size: the
// answer a person gave to ask_user.
type AuditNoter interface {
	AuditNote() string
}

// audit records a finished call and returns once the auditor has the
// record (for the store's writer: written to the database), so no result
// leaves the pipeline before its record. A failure to record is logged; the
// call's result stands.
func (r *Runner) audit(ctx context.Context, req *Request, res tool.Result) {
	if r.auditor == nil {
		return
	}
	rec := audit.Record{
		Time: req.Started, CallID: req.Call.ID, ProviderCallID: req.Call.ProviderID, Tool: req.Tool.Name,
		Provider: req.Provider, Arguments: req.Call.Arguments,
		Duration: time.Since(req.Started), IsError: res.IsError, DryRun: req.DryRun, Mode: string(req.Mode),
		UndoOf: req.UndoOf,
	}
	if req.Effects != nil {
		rec.Effect = req.Effects.Summary
	}
	caller := req.Context.Identity
	caller.Workspace = req.Scope.Workspace
	rec.SetCaller(caller)
	if req.Model != "" {
		rec.Provider += "/" + req.Model
	}
	for _, v := range req.Verdicts {
		rec.Verdicts = append(rec.Verdicts, audit.Verdict{Layer: v.Layer, Decision: v.Decision.String(), Rule: v.Rule})
	}
	if c := req.Confirmation; c != nil {
		rec.Confirmation = &audit.Confirmation{Asked: c.Asked, Answer: c.Answer, By: c.By, At: c.At, Rule: c.Rule, Reason: c.Reason}
	}
	req.during.fill(&rec)
	for _, c := range res.Content {
		rec.ResultBytes += len(c.Text) + len(c.Data)
	}
	if n, ok := res.Details.(AuditNoter); ok {
		rec.Note = n.AuditNote()
	}
	switch {
	case req.Outcome != "":
		rec.ErrorClass = string(req.Outcome)
	case res.IsError:
		rec.ErrorClass = string(OutcomeToolError)
	}
	err := r.auditor.Append(context.WithoutCancel(ctx), rec)
	switch {
	case errors.Is(err, audit.ErrNotDurable):
		// Kept until it can be written; the auditor's owner says once
		// that records are not durable, not once per call.
		r.log.Debug("the audit record is not durable yet", "tool", rec.Tool, "call", rec.CallID, "err", err)
	case err != nil:
		r.log.Error("writing the audit record failed", "tool", rec.Tool, "call", rec.CallID, "err", err)
	}
}
