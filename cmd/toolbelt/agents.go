package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/toolbelt/toolbelt/config"
)

type agentsCmd struct {
	JSON bool `name:"json" help:"Print a JSON array of the agents."`
}

// listedAgent is one agent as toolbelt agents --json prints it.
type listedAgent struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Model         string   `json:"model"`
	Workspace     string   `json:"workspace"`
	System        string   `json:"system"`
	Profile       string   `json:"profile"`
	Spawns        []string `json:"spawns"`
	MaxDepth      int      `json:"maxDepth"`
	MaxConcurrent int      `json:"maxConcurrent"`
}

func (c *agentsCmd) Run(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	out := []listedAgent{}
	for _, id := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[id]
		out = append(out, listedAgent{
			ID: id, Name: cmp.Or(a.Name, id), Description: a.Description, Model: cmp.Or(a.Model, cfg.Model),
			Workspace: configPath(cfg, a.Workspace), System: a.System, Profile: a.Tools.Profile,
			Spawns: append([]string{}, a.Subagents.Allow...), MaxDepth: a.Subagents.Depth(), MaxConcurrent: a.Subagents.Concurrent(),
		})
	}
	if c.JSON {
		return writeJSON(e.stdout, out)
	}
	if len(out) == 0 {
		_, err := fmt.Fprintf(e.stdout, "No agents are configured. Add them under agents: in %s (see docs/agents.md).\n", cmp.Or(cfg.Path, "toolbelt.yaml"))
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODEL\tWORKSPACE\tSPAWNS\tDESCRIPTION")
	for _, a := range out {
		tableRow(tw, a.ID, a.Name, cmp.Or(a.Model, "-"), cmp.Or(a.Workspace, "-"), cmp.Or(strings.Join(a.Spawns, ","), "-"), clipLine(a.Description, 60))
	}
	return tw.Flush()
}

// configuredAgent returns the agent id names in the config, or an error
// listing the configured ones.
func configuredAgent(cfg *config.Config, id string) (config.Agent, error) {
	a, ok := cfg.Agents[id]
	if !ok {
		ids := slices.Sorted(maps.Keys(cfg.Agents))
		if len(ids) == 0 {
			return a, fmt.Errorf("--agent %s: no agents are configured (add them under agents: in toolbelt.yaml; see docs/agents.md)", id)
		}
		return a, fmt.Errorf("--agent %s: no such agent; configured: %s", id, strings.Join(ids, ", "))
	}
	return a, nil
}
