package toolbelt

import (
	"context"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/policy"
)

// RevokeApprovals forgets the approvals kept for the workspace ws — all of
// them, those of a tool, or, when what is a rule with a specifier
// ("exec(npm run test:*)"), that saved rule — as by asked, records that in
// the audit log, and returns how many grants (allow always answers) and
// saved rules it forgot. The calls they allowed ask again, also in a
// process that is running (runners read both at every call).
func (tb *Toolbelt) RevokeApprovals(ctx context.Context, ws, what, by string) (grants, rules int64, err error) {
	if tb.writer == nil {
		return 0, 0, ErrToolsOnly
	}
	a := tb.st.Approvals(ws)
	if policy.RuleName(what) == what {
		if grants, err = a.Revoke(ctx, what); err != nil {
			return 0, 0, err
		}
	}
	if rules, err = a.RevokeRules(ctx, what); err != nil {
		return grants, 0, err
	}
	desc := "all approvals and saved rules"
	switch {
	case what != "" && policy.RuleName(what) != what:
		desc = "the saved rule " + what
	case what != "":
		desc = "the approvals and saved rules of " + what
	}
	rec := audit.Record{Kind: audit.KindApprovalsRevoked, Time: time.Now(), Tool: policy.RuleName(what), Workspace: ws, Channel: "cli",
		Note: fmt.Sprintf("%s revoked %s kept for the workspace (%d approvals, %d rules)", by, desc, grants, rules)}
	if err := tb.writer.Append(ctx, rec); err != nil {
		return grants, rules, fmt.Errorf("the approvals were revoked, but recording that in the audit log failed: %w", err)
	}
	return grants, rules, nil
}
