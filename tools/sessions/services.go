package sessions

import (
	"context"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Store reads the sessions kept in the store, for the session tools
// (store.ToolSessions is one).
type Store interface {
	// List returns the sessions that match f, the most recently updated
	// first.
	List(ctx context.Context, f tool.SessionFilter) ([]tool.SessionInfo, error)
	// Info returns a session's record, and false when there is none.
	Info(ctx context.Context, key string) (tool.SessionInfo, bool, error)
	// Messages returns a session's messages in order.
	Messages(ctx context.Context, key string) ([]tool.SessionMessage, error)
}

// Host runs agent sessions in the process — sub-agents spawned by
// sessions_spawn, sessions that sessions_send wakes — and delivers messages
// to them. It is set in the tool context of an agent run (toolbelt run);
// sessions_spawn, subagents and sessions_send need it. Methods return a
// tool.InputError for a refusal the model can act on; it says why.
type Host interface {
	// Spawn starts a sub-agent of the session req.ParentKey and returns at
	// once.
	Spawn(ctx context.Context, req tool.SpawnRequest) (tool.SpawnResult, error)
	// Children lists the sub-agents of session parentKey.
	Children(ctx context.Context, parentKey string) ([]tool.ChildInfo, error)
	// Steer delivers message to the sub-agent childKey of parentKey: before
	// its next model call when it runs, as a new run when it is idle.
	Steer(ctx context.Context, parentKey, childKey, message string) error
	// Kill cancels the run of the sub-agent childKey of parentKey (and its
	// own sub-agents); its status becomes aborted.
	Kill(ctx context.Context, parentKey, childKey string) error
	// Send delivers a message from session req.From to session req.To and
	// waits up to req.Timeout for the reply (the answer of the run that
	// takes the message); a zero Timeout does not wait.
	Send(ctx context.Context, req tool.SendRequest) (tool.SendResult, error)
	// Await waits up to timeout for the reply of an earlier Send that was
	// still pending, by its handle; from must be the session that sent it.
	Await(ctx context.Context, from, handle string, timeout time.Duration) (tool.SendResult, error)
	// Queue reports what waits in session key.
	Queue(key string) tool.SessionQueue
}

// StoreService is the key of the session store a tool context carries for
// the session tools; without one (or without configured agents) they are
// unavailable.
var StoreService = tool.NewService[Store]()

// HostService is the key of the session host a tool context carries in an
// agent run; sessions_spawn, subagents and sessions_send need it.
var HostService = tool.NewService[Host]()

// storeOf returns the session store of tc, nil when it carries none.
func storeOf(tc *tool.Context) Store {
	s, _ := StoreService.Get(tc)
	return s
}
