package invoke

import (
	"context"

	"github.com/toolbelt/toolbelt/tool"
)

type callerKey struct{}

// WithCaller returns a context whose calls run for caller, for a front door
// that serves several callers through one runner (each MCP client session,
// say), or a session host that runs several sessions: the identity of the
// call's session. A call run with it runs — for policy, for the audit log,
// for the labels of what it keeps, for the person asked to confirm it and
// for the tool — as the runner's identity made to run as caller
// ([tool.Identity.RunAs]: its session, channel, principal and owner flag,
// its agent when it names one, and its sandbox and sub-agent limits on top
// of the runner's, in the runner's workspace); a call nested in it (compact
// mode's tool_call) inherits it.
func WithCaller(ctx context.Context, caller tool.Identity) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom returns the caller ctx carries, if any.
func CallerFrom(ctx context.Context) (tool.Identity, bool) {
	c, ok := ctx.Value(callerKey{}).(tool.Identity)
	return c, ok
}
