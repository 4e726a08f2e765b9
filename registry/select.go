package registry

import (
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/tool"
)

// GroupPrefix starts a group reference ("group:fs").
const GroupPrefix = "group:"

// Option narrows which tools List and the Resolve methods select.
type Option func(*selector)

// Profile selects the tools of a profile; "full" and "" select all.
func Profile(name string) Option { return func(s *selector) { s.profile = name } }

// Section selects the tools of one section.
func Section(id string) Option { return func(s *selector) { s.section = id } }

// Include selects only the tools named by refs: tool ids, aliases, or group
// references ("group:fs", "group:core", "group:mcp:github"). Optional tools
// are selected only when included by name or group.
func Include(refs ...string) Option {
	return func(s *selector) { s.include = append(s.include, refs...) }
}

// Exclude drops the tools named by refs (as for Include). Exclusion wins.
func Exclude(refs ...string) Option {
	return func(s *selector) { s.exclude = append(s.exclude, refs...) }
}

type selector struct {
	profile, section string
	include, exclude []string
}

func newSelector(opts []Option) selector {
	var s selector
	for _, o := range opts {
		o(&s)
	}
	return s
}

func (s *selector) selects(m *tool.Meta) bool {
	if !m.InProfile(s.profile) || s.section != "" && m.Section != s.section {
		return false
	}
	if matchesAny(m, s.exclude) {
		return false
	}
	if len(s.include) > 0 {
		return matchesAny(m, s.include)
	}
	return !m.Optional
}

func matchesAny(m *tool.Meta, refs []string) bool {
	for _, ref := range refs {
		if Matches(m, ref) {
			return true
		}
	}
	return false
}

// Matches reports whether ref names the tool described by m: its id, an alias
// of it, or a group it is in (see [InGroup]).
func Matches(m *tool.Meta, ref string) bool {
	ref = strings.TrimSpace(ref)
	if g, ok := strings.CutPrefix(ref, GroupPrefix); ok {
		return InGroup(m, g)
	}
	if ref == m.ID {
		return true
	}
	id, ok := catalog.Alias(ref)
	return ok && id == m.ID
}

// InGroup reports whether the tool is in group (given without "group:"):
// its section's group, "core", "plugins" or "mcp" by source, or one of the
// extra groups in its metadata ("mcp:github").
func InGroup(m *tool.Meta, group string) bool {
	switch group {
	case m.Section:
		return true
	case "core":
		return m.Source == tool.SourceCore
	case "plugins":
		return m.Source == tool.SourcePlugin
	case "mcp":
		return m.Source == tool.SourceMCP
	}
	return slices.Contains(m.Groups, group)
}

// Unknown returns the refs that name no registered tool and no known group,
// so a person who mistyped one is told rather than silently getting nothing.
// Catalog sections and the source groups are always known.
func (r *Registry) Unknown(refs []string) []string {
	var unknown []string
	ordered := r.ordered()
	for _, ref := range refs {
		ref = strings.TrimSpace(ref)
		if g, ok := strings.CutPrefix(ref, GroupPrefix); ok {
			if _, known := catalog.SectionOrder(g); known || g == "core" || g == "plugins" || g == "mcp" {
				continue
			}
		}
		if !slices.ContainsFunc(ordered, func(e *entry) bool { return Matches(&e.meta, ref) }) {
			unknown = append(unknown, ref)
		}
	}
	return unknown
}

// Suggest returns up to n registered ids (among those the options select)
// closest to name, best first, as [closest.Names] ranks them; names too far
// from name to be a plausible typo are left out.
func (r *Registry) Suggest(name string, n int, opts ...Option) []string {
	s := newSelector(opts)
	var ids []string
	for _, e := range r.ordered() {
		if s.selects(&e.meta) {
			ids = append(ids, e.meta.ID)
		}
	}
	return closest.Names(name, ids, n)
}

// Selected reports whether the options select the tool described by m, as
// List and ResolveAll would.
func Selected(m *tool.Meta, opts ...Option) bool {
	s := newSelector(opts)
	return s.selects(m)
}
