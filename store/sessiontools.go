package store

import (
	"context"
	"errors"

	"github.com/toolbelt/toolbelt/tool"
)

// ForTools returns the sessions as the session tools read them.
func (ss *Sessions) ForTools() ToolSessions { return ToolSessions{ss} }

// ToolSessions are the sessions as the session tools read them (a
// sessions.Store of package tools/sessions).
type ToolSessions struct{ ss *Sessions }

func toolSession(s SessionInfo) tool.SessionInfo {
	return tool.SessionInfo{Key: s.ID, AgentID: s.AgentID, ParentKey: s.ParentKey, Status: s.Status, Model: s.Model, Label: s.Label,
		Created: s.Created, Updated: s.Updated, Messages: s.Messages, InputTokens: s.Usage.Input, OutputTokens: s.Usage.Output}
}

func (t ToolSessions) List(ctx context.Context, f tool.SessionFilter) ([]tool.SessionInfo, error) {
	list, err := t.ss.List(ctx, SessionFilter{AgentID: f.AgentID, Status: f.Status, Since: f.Since, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]tool.SessionInfo, len(list))
	for i, s := range list {
		out[i] = toolSession(s)
	}
	return out, nil
}

func (t ToolSessions) Info(ctx context.Context, key string) (tool.SessionInfo, bool, error) {
	s, err := t.ss.Info(ctx, key)
	if errors.Is(err, ErrNoSession) {
		return tool.SessionInfo{}, false, nil
	}
	if err != nil {
		return tool.SessionInfo{}, false, err
	}
	return toolSession(s), true, nil
}

func (t ToolSessions) Messages(ctx context.Context, key string) ([]tool.SessionMessage, error) {
	msgs, err := t.ss.Messages(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([]tool.SessionMessage, len(msgs))
	for i, m := range msgs {
		out[i] = tool.SessionMessage{Seq: m.Seq, Time: m.Time, Role: m.Role, Body: m.Body}
	}
	return out, nil
}
