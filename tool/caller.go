package tool

import "strings"

// Identity is who work runs as: its agent and session, where it came from,
// whether it is the owner's, and the limits that bind it (the sandbox, the
// sub-agent policy). A session keeps the identity it was created with, and
// a schedule the identity of whoever set it; work that later reaches either
// — a follow-up, a message from another session, a schedule's run, a job's
// outcome — runs as that identity, never as more (see [Identity.Exceeds]).
type Identity struct {
	// AgentID is the configured agent (its policy layer applies); "" for
	// none.
	AgentID string `json:"agentId,omitempty"`
	// SessionKey is the session.
	SessionKey string `json:"sessionKey,omitempty"`
	// Channel is where the work came from ("cli", "mcp", …).
	Channel string `json:"channel,omitempty"`
	// Principal is who the caller authenticated as; "" when the channel
	// does not say.
	Principal string `json:"principal,omitempty"`
	// Owner is true only when configuration says the caller is the owner.
	Owner bool `json:"owner"`
	// Sandboxed: commands must run in the sandbox, and the sandbox policy
	// layer applies.
	Sandboxed bool `json:"sandboxed,omitempty"`
	// Subagent: a sub-agent of another agent; the sub-agent policy layer
	// applies.
	Subagent bool `json:"subagent,omitempty"`
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

// Identity returns who tc's calls run as.
func (c *Context) Identity() Identity {
	return Identity{AgentID: c.AgentID, SessionKey: c.SessionKey, Channel: c.Channel, Principal: c.Principal,
		Owner: c.Owner, Sandboxed: c.Sandboxed, Subagent: c.Subagent}
}

// RunAs makes c's calls run as id: id's session, channel, principal and
// owner flag replace c's, and its agent when it names one; its sandbox and
// sub-agent limits add to c's, never lift them.
func (c *Context) RunAs(id Identity) {
	c.SessionKey, c.Channel, c.Principal, c.Owner = id.SessionKey, id.Channel, id.Principal, id.Owner
	if id.AgentID != "" {
		c.AgentID = id.AgentID
	}
	c.Sandboxed = c.Sandboxed || id.Sandboxed
	c.Subagent = c.Subagent || id.Subagent
}
