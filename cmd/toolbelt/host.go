package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// runHost is the session host of a toolbelt run: it runs the run's own
// session and the sub-agents and sessions it reaches, each with its
// agent's model, workspace, system prompt and tool policy.
type runHost struct {
	*host.Host
	e     *env
	f     *agentFlags
	cfg   *config.Config
	model string // the run's model: --base-url applies to its provider
	// view shows the calls, sub-agents and jobs of the run on stderr.
	view *runView
	// reads is what the run's sessions have read, for read before edit.
	reads *fs.Reads

	mu      sync.Mutex
	root    *agent.Agent // the run's own agent, handed out once
	rootKey string
	rootAs  tool.Identity // who root's runner runs as
	closers []io.Closer
}

// newRunHost makes the host of a run whose own agent root runs session
// rootKey in tc.
func (e *env) newRunHost(f *agentFlags, cfg *config.Config, model string, tc *tool.Context) (*runHost, error) {
	rh := &runHost{e: e, f: f, cfg: cfg, model: model, view: &runView{e: e}, reads: fs.NewReads()}
	var agents []host.Agent
	for _, id := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[id]
		agents = append(agents, host.Agent{ID: id, Model: cmp.Or(a.Model, cfg.Model), Allow: a.Subagents.Allow,
			MaxDepth: a.Subagents.Depth(), MaxConcurrent: a.Subagents.Concurrent()})
	}
	rh.Host = host.New(host.Options{
		Sessions: e.tb.Store().Sessions(), Workspace: tc.Workspace, Build: rh.build, Agents: agents,
		ContextWindow: func(model string) int { return toolbelt.ContextWindow(cfg, model) }, SubagentEnded: e.tb.EndSession,
	})
	return rh, rh.Host.Start(context.Background())
}

// Close stops the host — runs still under way get the shutdown grace —
// and releases what the sessions' runners hold (the runners, terminals).
func (rh *runHost) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = rh.Host.Stop(ctx)
	rh.view.Stop()
	rh.mu.Lock()
	defer rh.mu.Unlock()
	for _, c := range rh.closers {
		_ = c.Close()
	}
	rh.closers = nil
	return nil
}

// build makes the agent loop of session s: the run's own agent for the
// run's session (when it runs as the session does), otherwise one set up
// as toolbelt run --agent would, running as the session.
func (rh *runHost) build(s host.Spec) (*agent.Agent, error) {
	rh.mu.Lock()
	if rh.root != nil && s.Key == rh.rootKey && s.As == rh.rootAs {
		a := rh.root
		rh.root = nil
		rh.mu.Unlock()
		return a, nil
	}
	rh.mu.Unlock()
	ag, ok := rh.cfg.Agents[s.As.AgentID]
	if !ok {
		return nil, fmt.Errorf("agent %q is not configured", s.As.AgentID)
	}
	model := cmp.Or(s.Model, ag.Model, rh.cfg.Model)
	baseURL := ""
	if providerOf(model) == providerOf(rh.model) {
		baseURL = rh.f.BaseURL
	}
	client, err := toolbelt.ModelClient(rh.cfg, model, baseURL)
	if err != nil {
		return nil, err
	}
	wf := rh.f.workspaceFlags
	if ag.Workspace != "" {
		wf.Workspace = configPath(rh.cfg, ag.Workspace)
	}
	tc, err := wf.runContext(rh.e)
	if err != nil {
		return nil, err
	}
	tc.RunAs(s.As)
	sessions.HostService.Set(tc, rh)
	rh.holdReads(tc, ag)
	system, err := agentSystem(tc.Workspace, s.As.AgentID, ag.System)
	if err != nil {
		return nil, err
	}
	extra, err := sessionTools(rh.cfg, model, rh.f.Profile)
	if err != nil {
		return nil, err
	}
	compaction, err := agentCompaction(rh.cfg, ag, model, rh.model, rh.f.BaseURL)
	if err != nil {
		return nil, err
	}
	repair, err := agentRepair(rh.cfg, ag, rh.model, rh.f.BaseURL, rh.e.tb.Record)
	if err != nil {
		return nil, err
	}
	system, extra = rh.e.skills(rh.cfg, tc, system, extra)
	runner, closer, err := rh.runner(tc, extra)
	if err != nil {
		return nil, err
	}
	a := &agent.Agent{Client: client, Runner: runner, System: system, MaxTurns: rh.f.MaxTurns, Thinking: cmp.Or(s.Thinking, ag.Thinking), Compaction: compaction, Repair: repair, Hooks: toolbelt.AgentHooks(rh.cfg), OnEvent: func(ev agent.Event) {
		rh.view.onSubagentEvent(s.Key, ev)
	}}
	if ag.Compact {
		closer = rh.e.compactAgent(a, closer)
	}
	rh.mu.Lock()
	rh.closers = append(rh.closers, closer)
	rh.mu.Unlock()
	return a, nil
}

// holdReads holds the calls of tc, a session of agent ag, to read before
// edit, unless the agent turns it off (agents.<id>.readBeforeEdit).
func (rh *runHost) holdReads(tc *tool.Context, ag config.Agent) {
	if ag.ReadsBeforeEdit() {
		fs.ReadsService.Set(tc, rh.reads)
	}
}

// runner makes the pipeline of a session of the run: the run's flags,
// agent loop detection, the view's outcome step, and questions at the
// terminal (if any) pause the view's spinner.
func (rh *runHost) runner(tc *tool.Context, extra []invoke.Option) (*invoke.Runner, io.Closer, error) {
	r, closer, err := rh.e.runner(tc, rh.f.runFlags, invoke.Config{Loop: agentLoops}, append(extra, rh.view.outcomeStep())...)
	if t := terminalOf(closer); t != nil {
		t.spin = rh.view
	}
	return r, closer, err
}

// providerOf is the PROVIDER of PROVIDER/MODEL.
func providerOf(model string) string {
	p, _, _ := strings.Cut(strings.TrimSpace(model), "/")
	return p
}
