package invoke

import (
	"context"

	"github.com/toolbelt/toolbelt/tool"
)

// Caller says who makes a call, for a front door that serves several callers
// through one runner (each MCP client session, say), or a session host that
// runs several sessions: the identity of the call's session. A call run with
// a context carrying a Caller runs — for policy, for the audit log and for
// the tool — with the runner's tool context changed to say so
// ([tool.Context.RunAs]: its session, channel, principal and owner flag, its
// agent when it names one, and its sandbox and sub-agent limits on top of the
// runner's); a call nested in it (compact mode's tool_call) inherits it.
type Caller = tool.Identity

type callerKey struct{}

// WithCaller returns a context whose calls run for c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries, if any.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
