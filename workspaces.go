package toolbelt

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/agents"
	canvastool "github.com/toolbelt/toolbelt/tools/canvas"
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/gateway"
	"github.com/toolbelt/toolbelt/tools/image"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/message"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
	"github.com/toolbelt/toolbelt/tools/sessions"
	"github.com/toolbelt/toolbelt/tools/tts"
	"github.com/toolbelt/toolbelt/tools/web"
)

// Context returns the tool context of caller, for a runner (RunnerFor) or
// to describe tools in: in caller.Workspace when it is set — a workspace
// other than the root's is opened on its first use, and kept open until
// Close — else in the root's. The store, audit log, policy, job queue and
// schedules are the root's in every workspace; approvals and undo are kept
// by workspace.
func (tb *Toolbelt) Context(caller tool.Identity) (*tool.Context, error) {
	if tb.base == nil {
		return nil, ErrToolsOnly
	}
	ws := tb.ws
	if caller.Workspace != "" {
		abs, err := filepath.Abs(caller.Workspace)
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		ws = abs
	}
	if ws == tb.ws {
		return tb.contextFor(caller), nil
	}
	tb.wsMu.Lock()
	defer tb.wsMu.Unlock()
	base, ok := tb.workspaces[ws]
	if !ok && tb.isClosing() {
		return nil, ErrClosed // a bridge opened now would outlive Close
	}
	if !ok {
		var err error
		if base, err = tb.workspaceContext(ws); err != nil {
			return nil, err
		}
		if tb.workspaces == nil {
			tb.workspaces = map[string]*tool.Context{}
		}
		tb.workspaces[ws] = base
	}
	tc := *base
	caller.Workspace = ws
	tc.Identity = caller
	return &tc, nil
}

// contextFor returns the root workspace's context as caller's.
func (tb *Toolbelt) contextFor(c tool.Identity) *tool.Context {
	tc := *tb.base
	c.Workspace = tb.base.Workspace
	tc.Identity = c
	return &tc
}

// workspaceContext makes the tool context of the workspace ws: its file
// bridge (bridge), the tools' settings, and the services its tools use,
// kept in the root's store. The bridge is closed by Close. When ws cannot
// be opened, the context has no bridge, and the error says why.
func (tb *Toolbelt) workspaceContext(ws string) (*tool.Context, error) {
	tc := &tool.Context{
		Identity: tool.Identity{Workspace: ws}, Config: tool.Config(tb.cfg.Tools.Settings), Journal: tb.journal, Jobs: tb.jobs,
	}
	if tb.journal == nil {
		tc.Journal = nil // ToolsOnly: no typed nil
	}
	if tb.jobs == nil {
		tc.Jobs = nil
	}
	if len(tb.cfg.Agents) > 0 {
		agents.ListService.Set(tc, toolAgents(tb.cfg))
	}
	image.ModelsService.Set(tc, ImageModels(tb.cfg, "", ""))
	// Tools' requests: completions from the configured model; a front door
	// with a person to ask sets its own (the CLI at a terminal, the MCP
	// server's client).
	interact.Service.Set(tc, tb.ToolRequests(nil))
	if p, ok := tb.cfg.Providers["openai"]; ok {
		tts.OpenAIService.Set(tc, tts.Endpoint{BaseURL: p.URL, KeyEnv: p.KeyEnv})
	}
	if tb.channels != nil {
		message.ChannelsService.Set(tc, tb.channels)
	}
	if tb.gateway != nil {
		gateway.Service.Set(tc, tb.gateway)
	}
	nodetool.ServiceKey.Set(tc, lazyNodes{tb})
	if tb.canvas != nil {
		canvastool.HostService.Set(tc, tb.canvas)
		if tb.browser != nil {
			canvastool.CaptureService.Set(tc, tb.snapshotCanvas)
		}
	}
	if tb.st == nil { // ToolsOnly: the store opens when a tool uses it
		memory.IndexService.Set(tc, lazyMemory{tb})
		cron.SchedulerService.Set(tc, lazyCron{tb})
		if len(tb.cfg.Agents) > 0 {
			sessions.StoreService.Set(tc, lazySessions{tb})
		}
	} else {
		memory.IndexService.Set(tc, tb.st.Memory())
		web.CacheService.Set(tc, tb.st.Cache(store.CacheOptions{}))
		cron.SchedulerService.Set(tc, tb.sched)
		if len(tb.cfg.Agents) > 0 {
			sessions.StoreService.Set(tc, tb.st.Sessions().ForTools())
		}
	}
	b, closeBridge, err := tb.bridge(ws)
	if err != nil {
		return tc, err // it names the workspace
	}
	tb.onClose(func(context.Context) error { return closeBridge() })
	tc.FSRoot, tc.FS = ws, b
	return tc, nil
}

// bridge opens the file bridge of the workspace ws, protected as the
// pipeline's tools need: the configuration's protected paths (protected)
// may not be changed, and the data directory, when inside ws, is hidden
// from the tools — they can neither read nor change the audit log, the
// undo journal or the approvals kept there. Options.WrapBridge wraps it.
// closeBridge closes it.
func (tb *Toolbelt) bridge(ws string) (b fsbridge.Bridge, closeBridge func() error, err error) {
	opts := []fsbridge.Option{fsbridge.Protect(append(fsbridge.DefaultProtected(), tb.protected(ws)...)...)}
	if tb.data != "" && realpath.Within(tb.data, ws) {
		// Made now if missing, so that the sandbox covers it and no
		// command can create it, with files Toolbelt would then take as
		// its state.
		_ = os.MkdirAll(tb.data, 0o700)
		hidden := []string{tb.data}
		if real := realpath.Resolve(tb.data); real != tb.data {
			hidden = append(hidden, real)
		}
		opts = append(opts, fsbridge.Conceal(hidden...))
	}
	l, err := fsbridge.OpenLocal(ws, opts...)
	if err != nil {
		return nil, nil, err
	}
	if tb.opts.WrapBridge != nil {
		return tb.opts.WrapBridge(l), l.Close, nil
	}
	return l, l.Close, nil
}

// protected returns what the configuration adds to the protected paths of
// the workspace ws, with Options.Protect: the folders of directory tools
// it lists, and the files agents take their system prompt from (system:
// "@FILE" of every configured agent, in its workspace or else in ws) — no
// agent may rewrite the instructions or the tools it and its sub-agents
// are given. The paths are absolute; a bridge ignores those outside its
// root.
func (tb *Toolbelt) protected(ws string) []string {
	cfg := tb.cfg
	var out []string
	sources, _ := DirTools(cfg, ws)
	for _, src := range sources {
		out = append(out, src.Path)
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[id]
		name, ok := strings.CutPrefix(a.System, "@")
		if !ok || name == "" {
			continue
		}
		dir := ws
		if a.Workspace != "" {
			dir = cfg.Resolve(a.Workspace)
		}
		if abs, err := filepath.Abs(filepath.Join(dir, name)); err == nil {
			out = append(out, abs)
		}
	}
	return append(out, tb.opts.Protect...)
}

// toolAgents are the configured agents as the session tools see them, in
// id order; an agent without a model has the top-level one.
func toolAgents(cfg *config.Config) []tool.AgentInfo {
	var out []tool.AgentInfo
	for _, id := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[id]
		out = append(out, tool.AgentInfo{ID: id, Name: cmp.Or(a.Name, id), Description: a.Description, Model: cmp.Or(a.Model, cfg.Model),
			Spawns: append([]string{}, a.Subagents.Allow...)})
	}
	return out
}
