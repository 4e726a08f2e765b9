package tool

import "strings"

// Identity is who work runs as — its agent and session, where it came
// from, whether it is the owner's, and the limits that bind it (the
// sandbox, the sub-agent policy) — and the workspace it runs in. A tool
// context carries one ([Context.Identity]), and so does every call: policy,
// the audit log, the labels of what a call keeps ([Identity.Scope]) and
// the person asked to confirm it all read that one value.
//
// A session keeps the identity it was created with, and a schedule the
// identity of whoever set it; work that later reaches either — a
// follow-up, a message from another session, a schedule's run, a job's
// outcome — runs as that identity, never as more (see [Identity.Exceeds]).
type Identity struct {
	// AgentID is the configured agent (its policy layer applies); "" for
	// none.
	AgentID string `json:"agentId,omitempty"`
	// SessionKey is the session.
	SessionKey string `json:"sessionKey,omitempty"`
	// Channel is where the work came from ("cli", "mcp", …).
	Channel string `json:"channel,omitempty"`
	// Principal is who the caller authenticated as (the principal an MCP
	// bearer token maps to); "" when the channel does not say.
	Principal string `json:"principal,omitempty"`
	// Owner is true only when configuration says the caller is the owner.
	Owner bool `json:"owner"`
	// Sandboxed: commands must run in the sandbox, and the sandbox policy
	// layer applies.
	Sandboxed bool `json:"sandboxed,omitempty"`
	// Subagent: a sub-agent of another agent; the sub-agent policy layer
	// applies.
	Subagent bool `json:"subagent,omitempty"`
	// Workspace is the directory the work runs in; "" for none. It is not
	// kept with an identity (a session, a schedule, an intent keeps its
	// workspace apart, resolved), and running as another identity does not
	// change it ([Identity.RunAs]).
	Workspace string `json:"-"`
}

// Exceeds says which rights id has that limit lacks — the owner's, work
// outside the sandbox, work without the sub-agent policy — in words ("" when
// it has none): work asked for by limit must not run as id then.
func (id Identity) Exceeds(limit Identity) string {
	var more []string
	if id.Owner && !limit.Owner {
		more = append(more, "it runs as the owner")
	}
	if limit.Sandboxed && !id.Sandboxed {
		more = append(more, "it runs outside the sandbox")
	}
	if limit.Subagent && !id.Subagent {
		more = append(more, "it runs without the sub-agent policy")
	}
	return strings.Join(more, ", ")
}

// RunAs makes id run as caller: caller's session, channel, principal and
// owner flag replace id's, and its agent when it names one; its sandbox and
// sub-agent limits add to id's, never lift them. The workspace stays id's:
// a caller does not move work to another workspace.
func (id *Identity) RunAs(caller Identity) {
	id.SessionKey, id.Channel, id.Principal, id.Owner = caller.SessionKey, caller.Channel, caller.Principal, caller.Owner
	if caller.AgentID != "" {
		id.AgentID = caller.AgentID
	}
	id.Sandboxed = id.Sandboxed || caller.Sandboxed
	id.Subagent = id.Subagent || caller.Subagent
}

// Scope returns the scope of work run as id: its workspace made absolute
// with its symbolic links resolved (as far as it exists), and its session.
func (id Identity) Scope() Scope {
	return Scope{Workspace: ResolveDir(id.Workspace), Session: id.SessionKey}
}
