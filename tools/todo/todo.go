// Package todo provides todo_write, the agent's plan: a checklist the model
// writes whole on each call (Claude Code's TodoWrite). The list lives in
// the session's transcript — the latest todo_write result's details — so a
// kept session resumes with its plan, session_status reports it, and
// toolbelt run and chat show it as a checklist when it changes.
package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Name is the tool's name.
const Name = "todo_write"

// The states of an item.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Item is one step of the plan.
type Item struct {
	Content    string `json:"content" jsonschema:"The step, in the imperative: \"Run the tests\"." minLength:"1"`
	Status     string `json:"status" enum:"pending,in_progress,completed" jsonschema:"pending: not started. in_progress: under way (one at a time). completed: done."`
	ActiveForm string `json:"activeForm" jsonschema:"The step as it is being done: \"Running the tests\"; shown while it is in progress." minLength:"1"`
}

// Details are a todo_write result's details: the whole list and its
// counts.
type Details struct {
	Todos     []Item `json:"todos"`
	Completed int    `json:"completed"`
	Total     int    `json:"total"`
}

type args struct {
	Todos []Item `json:"todos" jsonschema:"The whole list, in order: it replaces the one before."`
}

const description = "Keep your plan for a multi-step task as a checklist the user sees. Each call gives the whole list " +
	"(it replaces the last): every step with content, status (pending, in_progress, completed) and activeForm. " +
	"Mark a step in_progress before you start it, one at a time, and completed as soon as it is done; add steps " +
	"you discover. Skip it for a task of one or two steps. session_status shows the current list."

// Register adds todo_write to reg. It is read-only: it changes nothing
// but what the transcript says, so plan mode and dry runs allow it.
func Register(reg *registry.Registry) error {
	t, err := tool.New(Name, description, write)
	if err != nil {
		return err
	}
	return reg.Register(t, tool.Meta{ID: Name, Label: "Write Todos", Description: description, ReadOnly: true, Idempotent: true, Source: tool.SourceCore})
}

func write(_ context.Context, in args, _ tool.Invocation) (tool.Result, error) {
	if n := count(in.Todos, InProgress); n > 1 {
		return tool.Result{}, tool.InputErrorf("%d steps are in_progress: keep one in progress at a time, the others pending or completed.", n)
	}
	d := Details{Todos: in.Todos, Completed: count(in.Todos, Completed), Total: len(in.Todos)}
	if d.Todos == nil {
		d.Todos = []Item{}
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: Checklist(d.Todos)}}, Details: d}, nil
}

func count(items []Item, status string) int {
	n := 0
	for _, it := range items {
		if it.Status == status {
			n++
		}
	}
	return n
}

// Checklist writes items as a checklist: [x] done, [>] under way (its
// activeForm), [ ] to do, after a line counting what is done.
func Checklist(items []Item) string {
	if len(items) == 0 {
		return "Todo list cleared."
	}
	lines := []string{fmt.Sprintf("Todos (%d/%d completed):", count(items, Completed), len(items))}
	for _, it := range items {
		switch it.Status {
		case Completed:
			lines = append(lines, "[x] "+it.Content)
		case InProgress:
			lines = append(lines, "[>] "+it.ActiveForm)
		default:
			lines = append(lines, "[ ] "+it.Content)
		}
	}
	return strings.Join(lines, "\n")
}

// Latest returns the plan of a session from its stored transcript: the
// details of its latest todo_write result that succeeded; ok is false when
// it has none.
func Latest(msgs []tool.SessionMessage) (d Details, ok bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		var m struct {
			Role     string  `json:"role"`
			ToolName string  `json:"toolName"`
			IsError  bool    `json:"isError"`
			Details  Details `json:"details"`
		}
		if json.Unmarshal(msgs[i].Body, &m) == nil && m.Role == tool.RoleToolResult && m.ToolName == Name && !m.IsError {
			return m.Details, true
		}
	}
	return Details{}, false
}
