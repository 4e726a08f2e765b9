package tool

import (
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

// SessionFilter narrows the sessions a session store lists (sessions.Store); zero fields do not filter.
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

// SpawnRequest asks for a sub-agent.
type SpawnRequest struct {
	// ParentKey is the session that spawns (the caller's).
	ParentKey string
	// Task is the sub-agent's first user message.
	Task string
	// AgentID is the agent to run (default: the caller's own).
	AgentID string
	// Label names the task for people.
	Label string
	// Model overrides the agent's PROVIDER/MODEL.
	Model string
	// Thinking overrides the agent's thinking level (off, low, medium,
	// high).
	Thinking string
	// Timeout bounds the sub-agent's run (0: none).
	Timeout time.Duration
}

// SpawnResult says which session runs the sub-agent.
type SpawnResult struct {
	Status          string `json:"status"`
	ChildSessionKey string `json:"childSessionKey"`
	RunID           string `json:"runId"`
	AgentID         string `json:"agentId"`
	Model           string `json:"model"`
}

// ChildInfo is a sub-agent as subagents lists it.
type ChildInfo struct {
	Key     string `json:"sessionKey"`
	AgentID string `json:"agentId"`
	Label   string `json:"label,omitempty"`
	Status  string `json:"status"`
	RunID   string `json:"runId,omitempty"`
	Model   string `json:"model,omitempty"`
	// Answer is the last answer of its last run, shortened.
	Answer string `json:"answer,omitempty"`
	// Error says why its last run failed.
	Error string `json:"error,omitempty"`
}

// SendRequest is a message from one session to another.
type SendRequest struct {
	From, To, Message string
	// Timeout is how long to wait for the reply (0: do not wait).
	Timeout time.Duration
	// Steer delivers the message as a steering message to a running
	// session: before its next model call, stopping the tools of its turn
	// that still run. Otherwise it follows once the session would stop.
	Steer bool
}

// SendResult is what became of a message: "accepted" (not waited for),
// "ok" with the reply, or "pending" with a handle to wait on.
type SendResult struct {
	Status     string `json:"status"`
	SessionKey string `json:"sessionKey"`
	Reply      string `json:"reply,omitempty"`
	Handle     string `json:"handle,omitempty"`
	Message    string `json:"message,omitempty"`
	// ReplyStatus is how the run that took the message ended (done,
	// failed, aborted), with Error saying why it failed.
	ReplyStatus string `json:"replyStatus,omitempty"`
	Error       string `json:"error,omitempty"`
}

// SessionQueue is what waits in a session.
type SessionQueue struct {
	// Running says a run of the session is going.
	Running bool `json:"running"`
	// PendingMessages counts the messages delivered to it that its model
	// has not seen yet.
	PendingMessages int `json:"pendingMessages"`
	// RunningChildren counts its sub-agents that run.
	RunningChildren int `json:"runningChildren"`
	// ContextTokens is the size of its last model request in tokens (0:
	// unknown), ContextWindow the model's window (0: unknown).
	ContextTokens int `json:"contextTokens"`
	ContextWindow int `json:"contextWindow"`
}
