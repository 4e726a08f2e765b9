// Package agents holds the tool of the agents section: agents_list, the
// configured agents a caller may target with sessions_spawn.
package agents

import (
	"context"
	"errors"
	"sort"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Register adds agents_list to reg; it is available only when agents are
// configured.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(listTool, tool.Meta{
		ID: "agents_list", Label: "List Agents", Description: description, ReadOnly: true, Source: tool.SourceCore,
	})
}

const description = "List the agents you may hand work to with sessions_spawn: each one's id, name, description and model."

type args struct{}

// Row is one agent as agents_list returns it.
type Row struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Model       string `json:"model,omitempty"`
}

func listTool(tc *tool.Context) (*tool.Tool, error) {
	if len(Configured(tc)) == 0 {
		return nil, errors.New("no agents configured: add agents: to toolbelt.yaml (docs/agents.md)")
	}
	t, err := tool.New("agents_list", description, func(_ context.Context, _ args, inv tool.Invocation) (tool.Result, error) {
		caller, ok := Caller(inv.Context)
		rows := []Row{}
		for _, a := range Configured(inv.Context) {
			if inv.Context.AgentID == "" || ok && caller.MayTarget(a.ID) {
				rows = append(rows, Row{ID: a.ID, Name: a.Name, Description: a.Description, Model: a.Model})
			}
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
		out := map[string]any{"agents": rows}
		if len(rows) == 0 {
			out["note"] = "agent " + inv.Context.AgentID + " may spawn no agents: its subagents.allow names none"
		}
		return tool.JSON(out)
	})
	return &t, err
}
