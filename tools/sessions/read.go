package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/todo"
)

// RegisterReaders adds the read-only tools over the store's sessions:
// sessions_list, sessions_history and session_status. Each is available
// only when agents are configured and the context reaches the sessions.
func RegisterReaders(reg *registry.Registry) error {
	for _, t := range []struct {
		id, label, description string
		factory                registry.Factory
	}{
		{"sessions_list", "List Sessions", listDescription, listTool},
		{"sessions_history", "Read Session History", historyDescription, historyTool},
		{"session_status", "Session Status", statusDescription, statusTool},
	} {
		if err := reg.RegisterFactory(t.factory, tool.Meta{ID: t.id, Label: t.label, Description: t.description, ReadOnly: true, Source: tool.SourceCore}); err != nil {
			return err
		}
	}
	return nil
}

const listDescription = "List agent sessions you can see (your own, your sub-agents', and those of agents you may spawn), " +
	"most recently updated first. Filter by agent, status and how recently they were active."

const historyDescription = "Read a session's messages, oldest first, in pages (offset, limit). Tool results are shortened; " +
	"set includeToolCalls to see tool calls and their results. Use sessions_list to find session keys."

const statusDescription = "Your own session's record: key, agent, model, status, message count, tokens used, " +
	"context window use (tokens of the last model call against the model's window, when known), the queue (messages " +
	"waiting for you, sub-agents still running), your plan (the todo_write list, when you keep one), created and updated times."

// Usable says why the session tools cannot be used in tc, or nil.
func Usable(tc *tool.Context) error {
	if len(agents.Configured(tc)) == 0 {
		return errors.New("no agents configured: add agents: to toolbelt.yaml (docs/agents.md)")
	}
	if storeOf(tc) == nil {
		return errors.New("no session store: this context does not reach the store's sessions")
	}
	return nil
}

// visibility says which sessions a caller may read: all of them when it is
// the owner and runs as no agent (a person at the terminal); otherwise its
// own session, its children, and the sessions of agents it may target (an
// MCP client that is not the owner runs as no agent and targets none).
type visibility struct {
	all   bool
	self  string
	agent tool.AgentInfo
}

func visibilityOf(tc *tool.Context) visibility {
	if tc.AgentID == "" {
		return visibility{all: tc.Owner, self: tc.SessionKey}
	}
	a, _ := agents.Caller(tc)
	a.ID = tc.AgentID
	return visibility{self: tc.SessionKey, agent: a}
}

func (v visibility) sees(s tool.SessionInfo) bool {
	return v.all || v.self != "" && (s.Key == v.self || s.ParentKey == v.self) || s.AgentID != "" && v.agent.MayTarget(s.AgentID)
}

// why explains a refusal to show key.
func (v visibility) why(key string) string {
	if v.agent.ID == "" {
		return fmt.Sprintf("session %q is not visible to this caller: a caller that is not the owner and runs as no agent sees only its own session and its sub-agents' sessions (the owner is set by mcp.owner or a token's owner flag)", key)
	}
	targets := "no agents"
	if len(v.agent.Spawns) > 0 {
		targets = strings.Join(v.agent.Spawns, ", ")
	}
	return fmt.Sprintf("session %q is not visible to agent %q: an agent sees its own session, its sub-agents' sessions, and the sessions of the agents its subagents.allow names (%s)", key, v.agent.ID, targets)
}

type listArgs struct {
	AgentID     string `json:"agentId,omitempty" jsonschema:"Only sessions of this agent."`
	Status      string `json:"status,omitempty" jsonschema:"Only sessions in this status." enum:"idle,running,done,failed,aborted"`
	ActiveSince string `json:"activeSince,omitempty" jsonschema:"Only sessions updated within this long, e.g. 30m, 2h, 1d."`
	Limit       int    `json:"limit,omitempty" jsonschema:"How many sessions to return at most." minimum:"1" maximum:"100" default:"20"`
}

// sessionRow is one session as sessions_list returns it.
type sessionRow struct {
	Key       string `json:"key"`
	AgentID   string `json:"agentId"`
	ParentKey string `json:"parentKey,omitempty"`
	Status    string `json:"status"`
	Model     string `json:"model,omitempty"`
	UpdatedAt string `json:"updatedAt"`
	Messages  int    `json:"messages"`
}

// scanLimit bounds the sessions read to filter by visibility for a caller
// that does not see them all.
const scanLimit = 1000

func listTool(tc *tool.Context) (*tool.Tool, error) {
	if err := Usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("sessions_list", listDescription, func(ctx context.Context, in listArgs, inv tool.Invocation) (tool.Result, error) {
		f := tool.SessionFilter{AgentID: in.AgentID, Status: in.Status, Limit: in.Limit}
		if f.Limit == 0 {
			f.Limit = 20
		}
		if in.ActiveSince != "" {
			d, err := parseSince(in.ActiveSince)
			if err != nil {
				return tool.Result{}, err
			}
			f.Since = time.Now().Add(-d)
		}
		v := visibilityOf(inv.Context)
		want := f.Limit
		if !v.all && !(f.AgentID != "" && v.agent.MayTarget(f.AgentID)) {
			f.Limit = scanLimit
		}
		list, err := storeOf(inv.Context).List(ctx, f)
		if err != nil {
			return tool.Result{}, err
		}
		rows := []sessionRow{}
		for _, s := range list {
			if len(rows) == want {
				break
			}
			if v.sees(s) {
				rows = append(rows, sessionRow{Key: s.Key, AgentID: s.AgentID, ParentKey: s.ParentKey, Status: s.Status, Model: s.Model, UpdatedAt: stamp(s.Updated), Messages: s.Messages})
			}
		}
		return tool.JSON(map[string]any{"count": len(rows), "sessions": rows})
	})
	return &t, err
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// parseSince reads a duration: Go's (90s, 30m, 2h45m) or a number of days (1d).
func parseSince(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days > 0 {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, tool.InputErrorf("activeSince %q is not a positive duration: write it like 30m, 2h or 1d", s)
}

type historyArgs struct {
	SessionKey       string `json:"sessionKey" jsonschema:"The session's key, as sessions_list gives it." minLength:"1"`
	Offset           int    `json:"offset,omitempty" jsonschema:"How many messages to skip from the start (0-based)." minimum:"0"`
	Limit            int    `json:"limit,omitempty" jsonschema:"How many messages to return at most." minimum:"1" maximum:"100" default:"20"`
	IncludeToolCalls bool   `json:"includeToolCalls,omitempty" jsonschema:"Include tool calls and their (shortened) results."`
}

// ToolResultChars bounds the text of a tool result sessions_history shows.
const ToolResultChars = 500

// historyRow is one message as sessions_history returns it.
type historyRow struct {
	Seq       int64      `json:"seq"`
	Role      string     `json:"role"`
	Time      string     `json:"time"`
	Text      string     `json:"text,omitempty"`
	ToolName  string     `json:"toolName,omitempty"`
	IsError   bool       `json:"isError,omitempty"`
	ToolCalls []toolCall `json:"toolCalls,omitempty"`
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// storedMessage is the part of a stored message sessions_history reads.
type storedMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"content"`
	ToolName string `json:"toolName"`
	IsError  bool   `json:"isError"`
}

func historyTool(tc *tool.Context) (*tool.Tool, error) {
	if err := Usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("sessions_history", historyDescription, func(ctx context.Context, in historyArgs, inv tool.Invocation) (tool.Result, error) {
		if in.Limit == 0 {
			in.Limit = 20
		}
		ss := storeOf(inv.Context)
		info, ok, err := ss.Info(ctx, in.SessionKey)
		if err != nil {
			return tool.Result{}, err
		}
		if !ok {
			return tool.Result{}, tool.InputErrorf("No session %q: use sessions_list to see the sessions you can read.", in.SessionKey)
		}
		if v := visibilityOf(inv.Context); !v.sees(info) {
			return tool.Result{}, tool.InputErrorf("%s.", v.why(in.SessionKey))
		}
		msgs, err := ss.Messages(ctx, in.SessionKey)
		if err != nil {
			return tool.Result{}, err
		}
		rows := []historyRow{}
		for _, m := range msgs {
			if r, ok := historyRowOf(m, in.IncludeToolCalls); ok {
				rows = append(rows, r)
			}
		}
		total := len(rows)
		page := rows[min(in.Offset, total):min(in.Offset+in.Limit, total)]
		out := map[string]any{"sessionKey": in.SessionKey, "total": total, "offset": in.Offset, "messages": page}
		if next := in.Offset + len(page); next < total {
			out["nextOffset"] = next
		}
		return tool.JSON(out)
	})
	return &t, err
}

// historyRowOf shapes a stored message; false leaves it out (a tool result,
// or a turn of only tool calls, when tool calls are not included).
func historyRowOf(m tool.SessionMessage, withTools bool) (historyRow, bool) {
	r := historyRow{Seq: m.Seq, Role: m.Role, Time: stamp(m.Time)}
	var sm storedMessage
	if err := json.Unmarshal(m.Body, &sm); err != nil {
		r.Text = "(unreadable message: " + err.Error() + ")"
		return r, true
	}
	if sm.Role != "" {
		r.Role = sm.Role
	}
	if sm.ToolName != "" && !withTools {
		return r, false
	}
	var text []string
	for _, b := range sm.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "toolCall":
			if withTools {
				r.ToolCalls = append(r.ToolCalls, toolCall{Name: b.Name, Arguments: b.Arguments})
			}
		}
	}
	r.Text = strings.Join(text, "\n")
	if sm.ToolName != "" {
		r.ToolName, r.IsError = sm.ToolName, sm.IsError
		r.Text = textclip.Clip(r.Text, ToolResultChars)
	}
	return r, r.Text != "" || len(r.ToolCalls) > 0
}

type statusArgs struct{}

func statusTool(tc *tool.Context) (*tool.Tool, error) {
	if err := Usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("session_status", statusDescription, func(ctx context.Context, _ statusArgs, inv tool.Invocation) (tool.Result, error) {
		key := inv.Context.SessionKey
		if key == "" {
			return tool.Result{}, tool.InputErrorf("This call runs outside a session (no session key), so there is no session to report on.")
		}
		s, ok, err := storeOf(inv.Context).Info(ctx, key)
		if err != nil {
			return tool.Result{}, err
		}
		if !ok {
			return tool.Result{}, tool.InputErrorf("Session %q is not in the store yet: it is kept once its run starts.", key)
		}
		out := map[string]any{
			"key": s.Key, "agentId": s.AgentID, "parentKey": s.ParentKey, "status": s.Status, "model": s.Model,
			"messages": s.Messages, "usage": map[string]int64{"input": s.InputTokens, "output": s.OutputTokens},
			"createdAt": stamp(s.Created), "updatedAt": stamp(s.Updated),
		}
		var q tool.SessionQueue
		if h, ok := HostService.Get(inv.Context); ok {
			q = h.Queue(key)
			out["queue"] = map[string]any{"pendingMessages": q.PendingMessages, "runningChildren": q.RunningChildren}
		}
		msgs, err := storeOf(inv.Context).Messages(ctx, key)
		if err != nil {
			return tool.Result{}, err
		}
		if q.ContextTokens == 0 {
			q.ContextTokens = contextTokens(msgs)
		}
		out["context"] = contextUse(q)
		if plan, ok := todo.Latest(msgs); ok {
			out["todos"] = plan
		}
		return tool.JSON(out)
	})
	return &t, err
}

// contextTokens is the size of the last model call of a stored transcript:
// the tokens its last assistant message reports; 0 when none does.
func contextTokens(msgs []tool.SessionMessage) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		var m struct {
			Role  string `json:"role"`
			Usage *struct {
				Input, Output, CacheRead, CacheWrite int
			} `json:"usage"`
		}
		if json.Unmarshal(msgs[i].Body, &m) == nil && m.Role == "assistant" && m.Usage != nil {
			return m.Usage.Input + m.Usage.Output + m.Usage.CacheRead + m.Usage.CacheWrite
		}
	}
	return 0
}

// contextUse reports the tokens of the last model call against the
// model's window, when it is known.
func contextUse(q tool.SessionQueue) map[string]any {
	out := map[string]any{"usedTokens": q.ContextTokens}
	if q.ContextWindow > 0 {
		out["windowTokens"] = q.ContextWindow
		out["percentUsed"] = float64(q.ContextTokens*1000/q.ContextWindow) / 10
	} else {
		out["windowTokens"] = nil
		out["note"] = "the model's context window is not known"
	}
	return out
}
