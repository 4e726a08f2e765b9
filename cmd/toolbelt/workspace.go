package main

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
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// workspaceFlags are the flags of commands that run or resolve tools.
type workspaceFlags struct {
	Workspace string `help:"Workspace directory the tools work in (default: TOOLBELT_WORKSPACE, the config's workspace, else the current directory)." placeholder:"DIR"`
}

// stateOf returns the workspace directory (see dir) and the store of its
// state.
func (w workspaceFlags) stateOf(e *env) (string, *store.Store, error) {
	ws, err := w.dir(e)
	if err != nil {
		return "", nil, err
	}
	st, err := e.state(ws)
	return ws, st, err
}

// dir returns the workspace directory: the flag, TOOLBELT_WORKSPACE, the
// config's workspace (relative to the config file), or the current directory.
func (w workspaceFlags) dir(e *env) (string, error) {
	dir := cmp.Or(w.Workspace, os.Getenv("TOOLBELT_WORKSPACE"))
	if dir == "" {
		cfg, err := e.config()
		if err != nil {
			return "", err
		}
		dir = configPath(cfg, cfg.Workspace)
	}
	abs, err := filepath.Abs(cmp.Or(dir, "."))
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	return abs, nil
}

// configPath resolves a path written in the config (config.Config.Resolve).
func configPath(cfg *config.Config, p string) string { return cfg.Resolve(p) }

// toolContext returns the tool context for a person at this terminal, as a
// pipeline hands it to tools: the owner, on the "cli" channel, in the
// workspace, with a file bridge confined to it, the tools' settings from the
// config and a place for full outputs. When the workspace cannot be used (it
// is missing or not a directory) the context has no bridge, so the tools that
// need one are listed as unavailable, with the reason.
func (w workspaceFlags) toolContext(e *env) (*tool.Context, error) {
	tc, _, err := w.open(e)
	if err != nil {
		return nil, err
	}
	return invoke.New(e.toolsNow(), tc).Context(), nil
}

// runContext is toolContext for commands that run tools: a workspace that
// cannot be used is an error.
func (w workspaceFlags) runContext(e *env) (*tool.Context, error) {
	tc, unusable, err := w.open(e)
	if err != nil {
		return nil, err
	}
	return tc, unusable
}

// open makes the tool context; unusable says why the workspace has no file
// bridge, and err is set only when there is no context at all.
func (w workspaceFlags) open(e *env) (tc *tool.Context, unusable, err error) {
	dir, err := w.dir(e)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := e.config()
	if err != nil {
		return nil, nil, err
	}
	tc = &tool.Context{
		Identity: tool.Identity{Workspace: dir, Owner: true, Channel: "cli"},
		Config:   tool.Config(cfg.Tools.Settings),
	}
	memory.IndexService.Set(tc, lazyMemory{e: e, workspace: dir})
	cron.SchedulerService.Set(tc, lazyCron{e: e, workspace: dir})
	if len(cfg.Agents) > 0 {
		agents.ListService.Set(tc, toolAgents(cfg))
		sessions.StoreService.Set(tc, lazySessions{e: e, workspace: dir})
	}
	opts := []fsbridge.Option{fsbridge.Protect(append(fsbridge.DefaultProtected(), e.protectedFiles(cfg, dir)...)...)}
	if data := e.concealedData(dir); data != nil {
		// Made now if missing, so that the sandbox covers it and no command
		// can create it, with files Toolbelt would then take as its state.
		_ = os.MkdirAll(data[0], 0o700)
		opts = append(opts, fsbridge.Conceal(data...))
	}
	b, err := fsbridge.OpenLocal(dir, opts...)
	if err != nil {
		return tc, err, nil
	}
	tc.FSRoot, tc.FS = dir, e.wrapped(b)
	return tc, nil, nil
}

// wrapped is b as the run's tools and recovery use it (see env.wrapBridge).
func (e *env) wrapped(b fsbridge.Bridge) fsbridge.Bridge {
	if e.wrapBridge == nil {
		return b
	}
	return e.wrapBridge(b)
}

// protectedFiles are what the configuration adds to the protected paths
// of the workspace dir: the folders of directory tools it lists, and the
// files agents take their system prompt from (system: "@FILE" of every
// configured agent, in its workspace or else in dir, and toolbelt run
// --system @FILE) — no agent may rewrite the instructions or the tools it
// and its sub-agents are given. The paths are absolute; a bridge ignores
// those outside its root.
func (e *env) protectedFiles(cfg *config.Config, dir string) []string {
	var out []string
	sources, _ := e.dirTools(cfg)
	for _, src := range sources {
		out = append(out, src.Path)
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[id]
		name, ok := strings.CutPrefix(a.System, "@")
		if !ok || name == "" {
			continue
		}
		ws := dir
		if a.Workspace != "" {
			ws = configPath(cfg, a.Workspace)
		}
		if abs, err := filepath.Abs(filepath.Join(ws, name)); err == nil {
			out = append(out, abs)
		}
	}
	if e.systemFile != "" {
		out = append(out, e.systemFile)
	}
	return out
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

// lazySessions is the store's sessions, opened when first used (as
// lazyMemory); commands that run tools set them directly (env.pipeline).
type lazySessions struct {
	e         *env
	workspace string
}

func (l lazySessions) sessions() (sessions.Store, error) {
	st, err := l.e.state(l.workspace)
	if err != nil {
		return nil, err
	}
	return st.Sessions().ForTools(), nil
}

func (l lazySessions) List(ctx context.Context, f tool.SessionFilter) ([]tool.SessionInfo, error) {
	ss, err := l.sessions()
	if err != nil {
		return nil, err
	}
	return ss.List(ctx, f)
}

func (l lazySessions) Info(ctx context.Context, key string) (tool.SessionInfo, bool, error) {
	ss, err := l.sessions()
	if err != nil {
		return tool.SessionInfo{}, false, err
	}
	return ss.Info(ctx, key)
}

func (l lazySessions) Messages(ctx context.Context, key string) ([]tool.SessionMessage, error) {
	ss, err := l.sessions()
	if err != nil {
		return nil, err
	}
	return ss.Messages(ctx, key)
}

// lazyCron is the workspace's schedules, opened when first used (as
// lazyMemory); commands that run tools set them directly (env.pipeline).
type lazyCron struct {
	e         *env
	workspace string
}

func (l lazyCron) cron() (cron.Scheduler, error) {
	st, err := l.e.state(l.workspace)
	if err != nil {
		return nil, err
	}
	return l.e.scheduler(st, l.workspace)
}

func (l lazyCron) Add(ctx context.Context, s tool.Schedule) (tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return s, err
	}
	return c.Add(ctx, s)
}

func (l lazyCron) Update(ctx context.Context, s tool.Schedule) (tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return s, err
	}
	return c.Update(ctx, s)
}

func (l lazyCron) Get(ctx context.Context, id string) (tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return tool.Schedule{}, err
	}
	return c.Get(ctx, id)
}

func (l lazyCron) Remove(ctx context.Context, id string) error {
	c, err := l.cron()
	if err != nil {
		return err
	}
	return c.Remove(ctx, id)
}

func (l lazyCron) List(ctx context.Context) ([]tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return nil, err
	}
	return c.List(ctx)
}

func (l lazyCron) RunNow(ctx context.Context, id string) (tool.ScheduleRun, error) {
	c, err := l.cron()
	if err != nil {
		return tool.ScheduleRun{}, err
	}
	return c.RunNow(ctx, id)
}

func (l lazyCron) Runs(ctx context.Context, id string, limit int) ([]tool.ScheduleRun, error) {
	c, err := l.cron()
	if err != nil {
		return nil, err
	}
	return c.Runs(ctx, id, limit)
}

// lazyMemory is the memory index of the store, opened when first used, so
// that listing tools does not open the store; commands that run tools set
// the store's index directly (env.pipeline).
type lazyMemory struct {
	e         *env
	workspace string
}

func (l lazyMemory) index() (*store.Memory, error) {
	st, err := l.e.state(l.workspace)
	if err != nil {
		return nil, err
	}
	return st.Memory(), nil
}

func (l lazyMemory) Stamps(ctx context.Context, scope string) (map[string]string, error) {
	m, err := l.index()
	if err != nil {
		return nil, err
	}
	return m.Stamps(ctx, scope)
}

func (l lazyMemory) Update(ctx context.Context, scope string, files []tool.MemoryFile) error {
	m, err := l.index()
	if err != nil {
		return err
	}
	return m.Update(ctx, scope, files)
}

func (l lazyMemory) Search(ctx context.Context, scope, query string, limit int) ([]tool.MemoryHit, error) {
	m, err := l.index()
	if err != nil {
		return nil, err
	}
	return m.Search(ctx, scope, query, limit)
}
