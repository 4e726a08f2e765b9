package invoke_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestToolLearnsApprovalAndCallerLimit: the pipeline tells a tool whether
// anyone approved its call, and the time limit its caller set, if any.
func TestToolLearnsApprovalAndCallerLimit(t *testing.T) {
	t.Parallel()
	report := func(risk tool.Risk) tool.Tool {
		return tool.Tool{
			Name: fmt.Sprintf("report_%s", risk),
			Meta: tool.Meta{Risk: risk},
			Execute: func(ctx context.Context, _ tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
				limit, capped := tool.CallerLimit(ctx)
				return tool.Textf("approval=%d limit=%v capped=%v", tool.ApprovalOf(ctx), limit, capped), nil
			},
		}
	}
	r := newRunner(t, []tool.Tool{report(tool.RiskLow), report(tool.RiskHigh)}, invoke.WithConfirmer(invoke.AutoApprove))
	for _, tt := range []struct {
		name string
		opts []invoke.CallOption
		want string
	}{
		{"report_low", nil, fmt.Sprintf("approval=%d limit=0s capped=false", tool.ApprovalUnasked)},
		{"report_high", nil, fmt.Sprintf("approval=%d limit=0s capped=false", tool.ApprovalGiven)},
		{"report_low", []invoke.CallOption{invoke.Timeout(3 * time.Second)}, fmt.Sprintf("approval=%d limit=3s capped=true", tool.ApprovalUnasked)},
	} {
		msg := r.Run(context.Background(), tool.Call{ID: "c", Name: tt.name, Arguments: []byte(`{}`)}, tt.opts...)
		if got := text(msg); got != tt.want {
			t.Errorf("%s %d options: %q, want %q", tt.name, len(tt.opts), got, tt.want)
		}
	}
	// Called directly, outside the pipeline, a tool learns neither.
	if tool.ApprovalOf(context.Background()) != tool.ApprovalUnknown {
		t.Error("a bare context claims an approval")
	}
}
