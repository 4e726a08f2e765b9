package invoke

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/provider"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// toolCache holds the tools a runner resolved while the registry was at one
// version, with their compiled validators.
type toolCache struct {
	version uint64
	mu      sync.RWMutex
	tools   map[string]*resolvedTool
}

type resolvedTool struct {
	tool tool.Tool
	once sync.Once
	v    *schema.Validator
	err  error

	outputOnce sync.Once // the output schema's validator (Request.outputValidator)
	output     *schema.Validator
	outputErr  error
}

// validator compiles the tool's schema on first use.
func (rt *resolvedTool) validator() (*schema.Validator, error) {
	rt.once.Do(func() { rt.v, rt.err = schema.Compile(rt.tool.Params()) })
	return rt.v, rt.err
}

// currentCache returns the cache for the registry's current version.
func (r *Runner) currentCache() *toolCache {
	v := r.reg.Version()
	if c := r.cache.Load(); c != nil && c.version == v {
		return c
	}
	c := &toolCache{version: v, tools: make(map[string]*resolvedTool)}
	r.cache.Store(c)
	return c
}

// resolve finds the tool a call names. When there is none it returns an
// error result for the model.
func (r *Runner) resolve(name string) (*resolvedTool, tool.Result) {
	c := r.currentCache()
	id, ok := r.reg.Lookup(name)
	if !ok {
		// Repair what models put around names: functions.read, tools/exec,
		// read:0 — when exactly one tool fits.
		id, ok = r.reg.Lookup(provider.ToolName(name, r.reg.Lookup))
	}
	if !ok {
		return nil, r.unknown(name)
	}
	c.mu.RLock()
	rt := c.tools[id]
	c.mu.RUnlock()
	if rt != nil {
		return rt, tool.Result{}
	}
	meta, ok := r.reg.Meta(id)
	if !ok || !registry.Selected(&meta, r.selects...) {
		return nil, r.unknown(name)
	}
	var reason error
	t, ok := r.reg.Resolve(id, r.tc, func(_ string, err error) { reason = err })
	if !ok {
		if reason == nil {
			return nil, r.unknown(name)
		}
		var ie tool.InfoError
		if errors.As(reason, &ie) {
			return nil, errorEnvelope(id, nil, reason) // it says whether to retry
		}
		return nil, tool.Errorf("Tool %q is not available here: %v", id, reason)
	}
	rt = &resolvedTool{tool: t}
	c.mu.Lock()
	if prev := c.tools[id]; prev != nil {
		rt = prev
	} else {
		c.tools[id] = rt
	}
	c.mu.Unlock()
	return rt, tool.Result{}
}

// Canonical returns the name of the tool a call naming name would run,
// after the repairs Run makes (case, aliases, the prefixes and counters
// models add), and whether the runner offers a tool of that name at all.
func (r *Runner) Canonical(name string) (string, bool) {
	name = strings.TrimSpace(name)
	id, ok := r.reg.Lookup(name)
	if !ok {
		id, ok = r.reg.Lookup(provider.ToolName(name, r.reg.Lookup))
	}
	if !ok {
		return "", false
	}
	meta, ok := r.reg.Meta(id)
	return id, ok && registry.Selected(&meta, r.selects...)
}

// unknown is the result for a name that matches no tool the runner offers:
// it names up to three close tools, or else some that exist — only tools
// the policy offers, so a denied tool is not suggested either.
func (r *Runner) unknown(name string) tool.Result {
	metas := slices.DeleteFunc(r.reg.List(r.selects...), func(m tool.Meta) bool { return !r.offered(m) })
	ids := make([]string, len(metas))
	for i, m := range metas {
		ids[i] = m.ID
	}
	if close := closest.Names(name, ids, 3); len(close) > 0 {
		return tool.Errorf("Tool %q not found. Did you mean %s? Call one of the tools you were given, spelled exactly.", name, orList(close))
	}
	if len(metas) == 0 {
		return tool.Errorf("Tool %q not found: no tools are available.", name)
	}
	const show = 10
	names := make([]string, 0, show)
	for _, m := range metas[:min(show, len(metas))] {
		names = append(names, fmt.Sprintf("%q", m.ID))
	}
	more := ""
	if len(metas) > show {
		more = fmt.Sprintf(" and %d more", len(metas)-show)
	}
	return tool.Errorf("Tool %q not found. Available tools: %s%s.", name, strings.Join(names, ", "), more)
}

// orList renders names as `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func orList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
