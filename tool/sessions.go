package tool

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// AgentInfo is a configured agent as the session tools see it.
type AgentInfo struct {
	ID, Name, Description, Model string
	// Spawns lists the agent ids it may target with sessions_spawn; "*"
	// stands for every configured agent.
	Spawns []string
}

// MayTarget reports whether the agent may target agent id.
func (a AgentInfo) MayTarget(id string) bool {
	return slices.Contains(a.Spawns, "*") || slices.Contains(a.Spawns, id)
}

// SessionStore reads the sessions kept in the store, for the session tools.
type SessionStore interface {
	// List returns the sessions that match f, the most recently updated
	// first.
	List(ctx context.Context, f SessionFilter) ([]SessionInfo, error)
	// Info returns a session's record, and false when there is none.
	Info(ctx context.Context, key string) (SessionInfo, bool, error)
	// Messages returns a session's messages in order.
	Messages(ctx context.Context, key string) ([]SessionMessage, error)
}

// SessionFilter narrows SessionStore.List; zero fields do not filter.
type SessionFilter struct {
	AgentID, Status string
	// Since keeps sessions updated at or after it.
	Since time.Time
	// Limit bounds the sessions returned.
	Limit int
}

// SessionInfo is a session's record.
type SessionInfo struct {
	Key, AgentID, ParentKey, Status, Model, Label string
	Created, Updated                              time.Time
	Messages                                      int
	InputTokens, OutputTokens                     int64
}

// SessionMessage is one message of a session's transcript; Body is the
// message as the agent loop stores it (role, content blocks, toolName, …).
type SessionMessage struct {
	Seq  int64
	Time time.Time
	Role string
	Body json.RawMessage
}

// Agent returns the configured agent the call runs as, and false when it
// runs as none (or as an agent the configuration does not hold).
func (c *Context) Agent() (AgentInfo, bool) {
	if c == nil || c.AgentID == "" {
		return AgentInfo{}, false
	}
	for _, a := range c.Agents {
		if a.ID == c.AgentID {
			return a, true
		}
	}
	return AgentInfo{}, false
}
