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
func policyRequest(caller tool.Identity, m tool.Meta, args map[string]any, provider, model string) policy.Request {
	return policy.Request{Meta: m, Args: args, Caller: caller, Provider: provider, Model: model}
}

// offered reports whether the policy lets the runner offer the tool at all.
func (r *Runner) offered(m tool.Meta) bool {
	return r.policy == nil || r.policy.Offers(policyRequest(r.tc.Identity, m, nil, "", ""))
}

// accessStep is the "access" step, which runs before the arguments are
// looked at: a tool the policy would not offer the caller is blocked here,
// so a denied tool's call never gets a validation error — which would show
// its schema — nor any other sign of how it would have run. Ask rules on
// arguments are left to the policy step, after normalization.
func (r *Runner) accessStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if r.policy == nil {
			return next(ctx, req)
		}
		res := r.policy.Decide(policyRequest(req.Context.Identity, req.Tool.Meta, nil, req.Provider, req.Model))
		if res.Decision == policy.Deny {
			req.Verdicts = res.Verdicts
			req.Outcome = OutcomeDenied
			return block(req, res.Reason)
		}
		return next(ctx, req)
	}
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
		if res, blocked := r.applyPolicy(ctx, req); blocked {
			return res
		}
		return next(ctx, req)
	}
}

// applyPolicy decides about the call with its current arguments — again
// when hooks changed them — and blocks it (blocked true) or, for an ask,
// requires approval.
func (r *Runner) applyPolicy(ctx context.Context, req *Request) (res tool.Result, blocked bool) {
	p := r.policy.Snapshot()
	d := p.Decide(r.callRequest(ctx, p, req))
	req.Verdicts = d.Verdicts
	switch d.Decision {
	case policy.Deny:
		req.Outcome = OutcomeDenied
		return block(req, d.Reason), true
	case policy.Ask:
		if req.Approval == nil {
			req.Approval = &Approval{By: "policy (" + d.Reason + ")"}
		}
	}
	req.preapproved = d.Preapproved
	return tool.Result{}, false
}

// SkillRules gives the allowed-tools of the skills active in a session
// (see skills.Catalog): the policy's "skill" layer pre-approves the tools
// they name.
type SkillRules interface {
	SkillRules(session string) []string
}

// WithSkills makes the runner's policy pre-approve, in each session, the
// tools that s says the session's active skills allow (deny and ask
// rules still win). Without a policy, an empty one is used.
func WithSkills(s SkillRules) Option { return func(r *Runner) { r.skills = s } }

// callRequest describes a call to policy p. The arguments are decoded
// only for a policy with conditions on them (the decoding was a tenth of
// the pipeline's CPU), and the files the call touches worked out only for
// one with conditions on files — or for skills active in the call's
// session, whose rules may have specifiers.
func (r *Runner) callRequest(ctx context.Context, p *policy.Policy, req *Request) policy.Request {
	if r.skills != nil {
		if skills := r.skills.SkillRules(req.Scope.Session); len(skills) > 0 {
			_, pr := r.ruleRequest(ctx, req)
			pr.Skills = skills
			return pr
		}
	}
	var args map[string]any
	if p.UsesArgs() {
		var err error
		if args, err = req.Args(); err != nil {
			args = map[string]any{}
		}
	}
	pr := policyRequest(req.Context.Identity, req.Tool.Meta, args, req.Provider, req.Model)
	if args != nil && p.UsesFiles() {
		pr.Files, pr.FilesListed = req.files(ctx)
	}
	if args != nil && p.UsesPrograms() {
		pr.Programs, pr.ProgramsListed = req.programs(ctx)
	}
	return pr
}
