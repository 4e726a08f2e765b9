package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
)

// SessionNode is a session with the sub-agent sessions it spawned, and
// theirs.
type SessionNode struct {
	store.SessionInfo
	Children []SessionNode
}

// MaxTreeSessions bounds the sessions a tree shows.
const MaxTreeSessions = 200

// SessionTree returns the tree of sub-agent sessions under the session
// key (a session records the one that spawned it as its ParentKey), each
// level the most recently updated first, with at most MaxTreeSessions in
// all.
func SessionTree(ctx context.Context, ss *store.Sessions, key string) (SessionNode, error) {
	root, err := ss.Info(ctx, key)
	if err != nil {
		return SessionNode{}, err
	}
	seen := map[string]bool{key: true}
	node := SessionNode{SessionInfo: root}
	return node, children(ctx, ss, &node, seen)
}

// children fills in n's children, and theirs; seen holds the sessions
// already in the tree, so none appears twice.
func children(ctx context.Context, ss *store.Sessions, n *SessionNode, seen map[string]bool) error {
	if len(seen) >= MaxTreeSessions {
		return nil
	}
	list, err := ss.List(ctx, store.SessionFilter{ParentKey: n.ID, Limit: MaxTreeSessions - len(seen)})
	if err != nil {
		return err
	}
	for _, s := range list {
		if seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		child := SessionNode{SessionInfo: s}
		if err := children(ctx, ss, &child, seen); err != nil {
			return err
		}
		n.Children = append(n.Children, child)
	}
	return nil
}

// Turn is one message of a transcript as the session page shows it: its
// text, and the tool calls it made with the results that answered them
// folded in.
type Turn struct {
	Seq   int64
	Time  time.Time
	Role  string
	Text  string
	Calls []Call
	// Unreadable says why the message could not be read; its Text is then
	// the message as stored.
	Unreadable string
	// IsError marks an assistant message that ended in an error, or a
	// tool result that answers no call of the transcript and is an error.
	IsError bool
	// ToolName is a tool result's tool, when it answers no call of the
	// transcript.
	ToolName string
}

// Call is a tool call of an assistant message and the result that
// answered it, when one did.
type Call struct {
	ID, Name string
	// Arguments are the call's, with secrets redacted as the audit log
	// redacts them.
	Arguments string
	Result    string
	Answered  bool
	IsError   bool
}

// Transcript turns a session's messages into turns: each tool result is
// folded into the call it answers.
func Transcript(msgs []store.SessionMessage) []Turn {
	var turns []Turn
	where := map[string][2]int{} // call id → turn, call
	for _, sm := range msgs {
		var m llm.Message
		if err := json.Unmarshal(sm.Body, &m); err != nil {
			turns = append(turns, Turn{Seq: sm.Seq, Time: sm.Time, Role: sm.Role, Text: string(sm.Body), Unreadable: err.Error()})
			continue
		}
		if m.Role == llm.RoleToolResult {
			if at, ok := where[m.ToolCallID]; ok {
				c := &turns[at[0]].Calls[at[1]]
				c.Result, c.Answered, c.IsError = strings.TrimSpace(m.Text()), true, m.IsError
				continue
			}
		}
		t := Turn{Seq: sm.Seq, Time: sm.Time, Role: m.Role, Text: strings.TrimSpace(m.Text()), ToolName: m.ToolName,
			IsError: m.IsError || m.StopReason == "error"}
		if m.ErrorMessage != "" {
			t.Text = strings.TrimSpace(t.Text + "\n" + m.ErrorMessage)
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockToolCall {
				where[b.ID] = [2]int{len(turns), len(t.Calls)}
				t.Calls = append(t.Calls, Call{ID: b.ID, Name: b.Name, Arguments: string(audit.Redact(b.Arguments))})
			}
		}
		turns = append(turns, t)
	}
	return turns
}

// sessionsShown is the most sessions the Sessions page lists.
const sessionsShown = 200

// sessionStatuses are the statuses a session can be in, for the filter.
var sessionStatuses = []string{store.SessionIdle, store.SessionRunning, store.SessionDone, store.SessionFailed, store.SessionAborted}

// sessionsView is the Sessions page's data.
type sessionsView struct {
	Agent, Status string
	Statuses      []string
	Sessions      []store.SessionInfo
}

func (c *Console) loadSessions(r *http.Request, _ User) (any, error) {
	q := r.URL.Query()
	v := sessionsView{Agent: q.Get("agent"), Status: q.Get("status"), Statuses: sessionStatuses}
	var err error
	v.Sessions, err = c.opts.Store.Sessions().List(r.Context(), store.SessionFilter{AgentID: v.Agent, Status: v.Status, Limit: sessionsShown})
	return v, err
}

// sessionView is a session's page: its tree of sub-agents and its
// transcript.
type sessionView struct {
	Tree  SessionNode
	Turns []Turn
	// Canvas is the session's canvas page, "" when none is served.
	Canvas string
}

func (c *Console) loadSession(r *http.Request, _ User) (any, error) {
	ss := c.opts.Store.Sessions()
	tree, err := SessionTree(r.Context(), ss, r.PathValue("key"))
	if errors.Is(err, store.ErrNoSession) {
		return nil, fmt.Errorf("%w: %w", err, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	msgs, err := ss.Messages(r.Context(), tree.ID)
	v := sessionView{Tree: tree, Turns: Transcript(msgs)}
	if c.opts.Canvas != nil {
		v.Canvas = "/canvas/" + url.PathEscape(tree.ID) + "/"
	}
	return v, err
}
