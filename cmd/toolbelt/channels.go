package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/channels/answer"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/tool"
)

// serveChannels mounts the webhook channels' incoming paths on mux and
// connects the channels, their messages answered by the routed agents'
// sessions; the returned stop disconnects them.
func (e *env) serveChannels(cfg *config.Config, mux *http.ServeMux) (stop func(context.Context) error, err error) {
	hub := e.tb.Channels()
	if hub == nil {
		return func(context.Context) error { return nil }, nil
	}
	for p, h := range hub.Handlers() {
		if p == "/mcp" || p == "/" {
			return nil, fmt.Errorf("a webhook channel's path %s is the server's own path: choose another, such as /channels/NAME", p)
		}
		mux.Handle("POST "+p, h)
	}
	ca := &channelAgents{e: e, cfg: cfg}
	// The conversations' sessions are kept in the store: they continue
	// across restarts, and across gateways sharing a PostgreSQL store.
	sessions := &answer.Sessions{Agent: ca.build, Store: e.tb.Store().Sessions(), Workspace: e.tb.Workspace()}
	return e.tb.ServeChannels(context.Background(), sessions)
}

// channelAgents makes the agents that answer channel messages.
type channelAgents struct {
	e   *env
	cfg *config.Config
}

// build makes the agent of turn t: the routed agent's model, workspace,
// system prompt and policy, its calls running as t's identity (the owner's
// rights only for an owner's message; approvals asked in the console).
func (ca *channelAgents) build(_ context.Context, t channels.Turn) (*agent.Agent, func(), error) {
	ag, ok := ca.cfg.Agents[t.Agent]
	if !ok {
		return nil, nil, fmt.Errorf("agent %q is not configured", t.Agent)
	}
	model := cmp.Or(ag.Model, ca.cfg.Model)
	client, err := toolbelt.ModelClient(ca.cfg, model, "")
	if err != nil {
		return nil, nil, err
	}
	ws := ca.e.tb.Workspace()
	if ag.Workspace != "" {
		ws = configPath(ca.cfg, ag.Workspace)
	}
	tc, err := ca.e.tb.Context(tool.Identity{Workspace: ws})
	if err != nil {
		return nil, nil, err
	}
	tc.RunAs(t.Identity())
	system, err := agentSystem(tc.Workspace, t.Agent, ag.System)
	if err != nil {
		return nil, nil, err
	}
	compaction, err := agentCompaction(ca.cfg, ag, model, model, "")
	if err != nil {
		return nil, nil, err
	}
	repair, err := agentRepair(ca.cfg, ag, model, "", ca.e.tb.Record)
	if err != nil {
		return nil, nil, err
	}
	system, opts := ca.e.skills(ca.cfg, tc, system, nil)
	runner, err := ca.e.tb.RunnerFor(tc, opts...)
	if err != nil {
		return nil, nil, err
	}
	// Each turn is a session of the lifecycle hooks: it ends once answered.
	a := &agent.Agent{Client: client, Runner: runner, System: system, Compaction: compaction, Repair: repair, Hooks: toolbelt.AgentHooks(ca.cfg)}
	var closer io.Closer = closerFunc(func() error { runner.Close(); return nil })
	if ag.Compact {
		// As toolbelt run and chat do for the agent (docs/compact.md).
		closer = ca.e.compactAgent(a, closer)
	}
	return a, func() {
		a.EndSession(context.Background(), "done")
		_ = closer.Close()
	}, nil
}
