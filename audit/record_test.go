package audit_test

import (
	"testing"

	"github.com/toolbelt/toolbelt/audit"
)

func TestDecision(t *testing.T) {
	t.Parallel()
	allow := audit.Verdict{Layer: "global", Decision: "allow"}
	ask := audit.Verdict{Layer: "agent", Decision: "ask"}
	deny := audit.Verdict{Layer: "provider", Decision: "deny"}
	for _, tc := range []struct {
		name string
		r    audit.Record
		want string
	}{
		{"no policy", audit.Record{}, ""},
		{"allowed", audit.Record{Verdicts: []audit.Verdict{allow, allow}}, "allow"},
		{"ask, nobody asked", audit.Record{Verdicts: []audit.Verdict{allow, ask}}, "ask"},
		{"ask, answered", audit.Record{Verdicts: []audit.Verdict{ask, allow}, Confirmation: &audit.Confirmation{Asked: true, Answer: "allow-once"}}, "allow-once"},
		{"needed approval, nobody to ask", audit.Record{Verdicts: []audit.Verdict{allow}, Confirmation: &audit.Confirmation{Answer: "none"}}, "unconfirmed"},
		{"an earlier allow-always held", audit.Record{Verdicts: []audit.Verdict{allow}, Confirmation: &audit.Confirmation{Answer: "allowed-before"}}, "allowed-before"},
		{"no rule names it", audit.Record{Verdicts: []audit.Verdict{{Layer: "global", Decision: "none"}, allow}}, "allow"},
		{"no policy, nobody to ask", audit.Record{Confirmation: &audit.Confirmation{Answer: "none"}}, "unconfirmed"},
		{"deny wins", audit.Record{Verdicts: []audit.Verdict{allow, ask, deny}, Confirmation: &audit.Confirmation{Asked: true, Answer: "allow-once"}}, "deny"},
	} {
		if got := tc.r.Decision(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
