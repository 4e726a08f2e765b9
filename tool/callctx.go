package tool

import (
	"context"
	"time"
)

// What the pipeline tells a tool about the call it runs, through the call's
// context. A tool run outside the pipeline (called directly by a Go
// program) finds neither and should behave as its caller asked.

type callerLimitKey struct{}

// WithCallerLimit returns ctx marked with the time limit the caller set for
// the call (a --timeout flag, a per-call option), as opposed to a default.
// A tool that could leave work running after its call returns must not do
// so: the caller's limit is the limit of the work.
func WithCallerLimit(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callerLimitKey{}, d)
}

// CallerLimit returns the time limit the caller set for the call, and false
// when the call runs with a default limit only.
func CallerLimit(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(callerLimitKey{}).(time.Duration)
	return d, ok && d > 0
}

type foregroundKey struct{}

// WithForeground returns ctx marked as the context of a call whose caller
// cannot follow work left running after the call returns (a one-shot
// `toolbelt call`, which exits when its call ends and stops what is still
// running). A tool must then finish or stop its work before it returns.
func WithForeground(ctx context.Context) context.Context {
	return context.WithValue(ctx, foregroundKey{}, true)
}

// Foreground reports whether ctx was marked with WithForeground.
func Foreground(ctx context.Context) bool {
	f, _ := ctx.Value(foregroundKey{}).(bool)
	return f
}

// Approval says how a call came to run.
type Approval int

const (
	// ApprovalUnknown: the call did not come through the pipeline's
	// confirmation step (a direct Go call); the caller answers for it.
	ApprovalUnknown Approval = iota
	// ApprovalUnasked: the pipeline ran the call without asking anyone,
	// because its risk (the tool's, or its preview's) did not require it.
	// A tool must then do no more than the risk it declared allows.
	ApprovalUnasked
	// ApprovalGiven: a person (or a configured answer) approved the call.
	ApprovalGiven
)

type approvalKey struct{}

// WithApproval returns ctx marked with how the call came to run.
func WithApproval(ctx context.Context, a Approval) context.Context {
	return context.WithValue(ctx, approvalKey{}, a)
}

// ApprovalOf returns how the call whose context ctx is came to run.
func ApprovalOf(ctx context.Context) Approval {
	a, _ := ctx.Value(approvalKey{}).(Approval)
	return a
}

type approvedKey struct{}

// WithApprovedEffects returns ctx carrying the effects a call was approved
// for, as its preview described them to the person (or to the earlier
// "always" that held). A tool whose effects rest on state that can change
// between the approval and the work (the workspace files a command runs)
// checks when it starts that they still hold.
func WithApprovedEffects(ctx context.Context, e *Effects) context.Context {
	return context.WithValue(ctx, approvedKey{}, e)
}

// ApprovedEffects returns the effects the call whose context ctx is was
// approved for, or nil.
func ApprovedEffects(ctx context.Context) *Effects {
	e, _ := ctx.Value(approvedKey{}).(*Effects)
	return e
}

// LogFunc receives a log line of a running call: level is one of the
// syslog levels MCP uses (debug, info, notice, warning, error, critical,
// alert, emergency), message the tool's words.
type LogFunc func(level, message string)

type logKey struct{}

// WithLog returns ctx carrying fn, which receives the call's log lines (an
// MCP front door sends them to the client as notifications/message, at
// the level the client set).
func WithLog(ctx context.Context, fn LogFunc) context.Context {
	return context.WithValue(ctx, logKey{}, fn)
}

// Log sends a log line of the call whose context ctx is to who follows
// it; without anyone (a call outside an MCP front door) it does nothing.
// It must not be called after the call has returned.
func Log(ctx context.Context, level, message string) {
	if fn, _ := ctx.Value(logKey{}).(LogFunc); fn != nil {
		fn(level, message)
	}
}

// LogLevels are the levels of [Log], from the least to the most severe.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
