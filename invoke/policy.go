package invoke

import (
	"context"

	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// WithPolicy makes the runner apply a tool policy: denied tools are not
// offered (Tools leaves them out) and their calls are blocked; calls an ask
// rule matches need a person's approval.
func WithPolicy(p *policy.Policy) Option { return func(r *Runner) { r.policy = p } }

// policyRequest describes a call, or a tool to offer, to the policy.
func (r *Runner) policyRequest(m tool.Meta, args map[string]any, provider, model string) policy.Request {
	tc := r.tc
	return policy.Request{
		Meta: m, Args: args, Agent: tc.AgentID, Provider: provider, Model: model, Channel: tc.Channel,
		Sandboxed: tc.Sandboxed, Subagent: tc.Subagent, Owner: tc.Owner,
	}
}

// offered reports whether the policy lets the runner offer the tool at all.
func (r *Runner) offered(m tool.Meta) bool {
	return r.policy == nil || r.policy.Offers(r.policyRequest(m, nil, "", ""))
}

// policyStep is the "policy" step: the call must pass every layer of the
// policy. A denied call is blocked with the reason; a call an ask rule
// matches needs approval (see the confirm step). Each layer's verdict is
// kept for the audit log.
func (r *Runner) policyStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if r.policy == nil {
			return next(ctx, req)
		}
		args, err := req.Args()
		if err != nil {
			args = map[string]any{}
		}
		res := r.policy.Decide(r.policyRequest(req.Tool.Meta, args, req.Provider, req.Model))
		req.Verdicts = res.Verdicts
		switch res.Decision {
		case policy.Deny:
			req.Outcome = OutcomeDenied
			return block(req, res.Reason)
		case policy.Ask:
			if req.Approval == nil {
				req.Approval = &Approval{By: "policy (" + res.Reason + ")"}
			}
		}
		return next(ctx, req)
	}
}
