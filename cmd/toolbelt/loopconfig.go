package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
)

// agentCompaction is the compaction of agent ag's sessions on model: the
// top-level compaction with agents.<id>.compaction over it, its summaries
// written by its model (--base-url, the run's, applies when that is of
// the run's provider). Nil when it is off or model's context window is not
// known (providers.<p>.contextWindow tells it).
func agentCompaction(cfg *config.Config, ag config.Agent, model, runModel, baseURL string) (*agent.Compaction, error) {
	cc := ag.Compaction.Over(cfg.Compaction)
	window := toolbelt.ContextWindow(cfg, model)
	if !cc.On() || window == 0 {
		return nil, nil
	}
	out := &agent.Compaction{Window: window, Threshold: cc.Threshold, KeepTurns: cc.KeepTurns, ToolResultTurns: cc.ToolResultTurns}
	if cc.Model != "" {
		if providerOf(cc.Model) != providerOf(runModel) {
			baseURL = ""
		}
		c, err := toolbelt.ModelClient(cfg, cc.Model, baseURL)
		if err != nil {
			return nil, fmt.Errorf("compaction.model: %w", err)
		}
		out.Client = c
	}
	return out, nil
}

// agentRepair is the repair of agent ag's calls: agents.<id>.repair.model,
// else repair.model (--base-url, the run's, applies when it is of the
// run's provider), each repair audited through record. Nil when neither
// names a model.
func agentRepair(cfg *config.Config, ag config.Agent, runModel, baseURL string, record func(context.Context, audit.Record) error) (*agent.Repair, error) {
	model := cmp.Or(ag.Repair.Model, cfg.Repair.Model)
	if model == "" {
		return nil, nil
	}
	if providerOf(model) != providerOf(runModel) {
		baseURL = ""
	}
	c, err := toolbelt.ModelClient(cfg, model, baseURL)
	if err != nil {
		return nil, fmt.Errorf("repair.model: %w", err)
	}
	return &agent.Repair{Client: c, Audit: record}, nil
}
