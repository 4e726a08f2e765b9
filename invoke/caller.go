package invoke

import "context"

// Caller says who makes a call, for a front door that serves several callers
// through one runner (each MCP client session, say). A call run with a
// context carrying a Caller runs — for policy, for the audit log and for the
// tool — with the runner's tool context changed to say so; a call nested in
// it (compact mode's tool_call) inherits it.
type Caller struct {
	// SessionKey is the caller's session (the MCP session id).
	SessionKey string
	// Channel is where the call came from ("mcp").
	Channel string
	// Principal is who the caller authenticated as (the principal an HTTP
	// bearer token maps to); "" when the transport does not say.
	Principal string
	// Owner is true only when configuration says this caller is the owner.
	Owner bool
	// AgentID, when set, is the configured agent the call runs as (its tool
	// policy applies); "" keeps the runner's.
	AgentID string
}

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
