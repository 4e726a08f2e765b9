package tool

import "context"

// Question is a yes/no approval a tool asks for in the middle of a call,
// beyond the approval of the call itself: the sandbox's network proxy asks
// whether a command may reach a host its configuration does not name. The
// pipeline puts it to the person who approves the call's approvals, with
// the same grants ("for this session", "for this workspace") and records
// the answer in the call's audit record.
type Question struct {
	// Message says what is asked, with the facts ("the command `npm
	// install` wants to reach registry.npmjs.org:443").
	Message string
	// Reason says why a person is asked ("a host not in
	// tools.exec.network.allow").
	Reason string
	// Action identifies what is approved: an answer for the session or
	// the workspace holds for later questions of the same tool with the
	// same Action, in the same workspace.
	Action string
	// Always says what such an answer covers, for the person asked; ""
	// offers "once" only.
	Always string
	// PersonOnly asks for a person's answer to this question each time:
	// bypass mode does not answer it, no earlier answer for the session or
	// workspace holds, and an unanswered question is not allowed even
	// where confirmOnTimeout is allow. For what would undo the governance
	// itself, such as rewriting the policy.
	PersonOnly bool
}

// Reply is what came of a Question.
type Reply struct {
	// Allow says yes.
	Allow bool
	// Answer is the audit log's word for how it came: "allow-once",
	// "allow-session", "allow-workspace", "allowed-before" (an earlier
	// answer for the session or workspace held), "deny", "timeout" or
	// "none" (nobody could be asked).
	Answer string
	// By says who answered.
	By string
	// Reason, when not allowed, says why: the person's reason for a
	// denial, or why nobody could answer.
	Reason string
}

// Asker puts a Question to the person who approves a call.
type Asker func(ctx context.Context, q Question) Reply

type askerKey struct{}

// WithAsker returns ctx carrying the asker of the call whose context it
// is (the pipeline's confirm step sets it).
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// Ask puts q to the person who approves the call whose context ctx is.
// A call run outside the pipeline has nobody to ask: the reply is "none",
// not allowed.
func Ask(ctx context.Context, q Question) Reply {
	a, _ := ctx.Value(askerKey{}).(Asker)
	if a == nil {
		return Reply{Answer: "none", Reason: "the call did not come through the pipeline, so nobody can be asked"}
	}
	return a(ctx, q)
}

// HostUse is one host a call's work asked the network for through a
// filtering proxy (the sandbox's), as the call's audit record keeps it.
type HostUse struct {
	Host string `json:"host"`
	Port string `json:"port"`
	// Outcome is "reached", "refused" or "failed".
	Outcome string `json:"outcome"`
	// Reason says why a host was refused or could not be reached.
	Reason string `json:"reason,omitempty"`
}

type hostsKey struct{}

// WithHostRecorder returns ctx carrying where the call whose context it
// is records the hosts its work used (the pipeline keeps them for the
// call's audit record).
func WithHostRecorder(ctx context.Context, record func(HostUse)) context.Context {
	return context.WithValue(ctx, hostsKey{}, record)
}

// RecordHosts records hosts in the audit record of the call whose context
// ctx is; a call run outside the pipeline has none, and they are dropped.
func RecordHosts(ctx context.Context, hosts ...HostUse) {
	if record, _ := ctx.Value(hostsKey{}).(func(HostUse)); record != nil {
		for _, h := range hosts {
			record(h)
		}
	}
}
