package toolbelt

import (
	"context"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/audit"
)

// RevokeApprovals forgets the approvals kept for the workspace ws — all of
// them, or those of tool — as by asked, records that in the audit log, and
// returns how many it forgot. The calls they allowed ask again, also in a
// process that is running (runners read the approvals at every call).
func (tb *Toolbelt) RevokeApprovals(ctx context.Context, ws, tool, by string) (int64, error) {
	if tb.writer == nil {
		return 0, ErrToolsOnly
	}
	n, err := tb.st.Approvals(ws).Revoke(ctx, tool)
	if err != nil {
		return 0, err
	}
	what := "all approvals"
	if tool != "" {
		what = "the approvals of " + tool
	}
	rec := audit.Record{Kind: audit.KindApprovalsRevoked, Time: time.Now(), Tool: tool, Workspace: ws, Channel: "cli",
		Note: fmt.Sprintf("%s revoked %s kept for the workspace (%d)", by, what, n)}
	if err := tb.writer.Append(ctx, rec); err != nil {
		return n, fmt.Errorf("the approvals were revoked, but recording that in the audit log failed: %w", err)
	}
	return n, nil
}
