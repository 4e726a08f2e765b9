package config

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
)

// Policy returns the tool policy the configuration describes.
func (c *Config) Policy() *policy.Policy {
	p := &policy.Policy{
		Tools:      rules(c.Tools.Rules),
		Agents:     map[string]policy.Rules{},
		Channels:   map[string]policy.Rules{},
		Principals: map[string]policy.Rules{},
		Sandbox:    rules(c.Sandbox.Tools),
		Subagents:  rules(c.Subagents.Tools),
	}
	for id, s := range c.Agents {
		p.Agents[id] = rules(s.Tools)
	}
	for id, s := range c.Channels {
		p.Channels[id] = rules(s.Tools)
	}
	for id, s := range c.Principals {
		p.Principals[id] = rules(s.Tools)
	}
	return p
}

// rules returns the policy rules of r.
func rules(r Rules) policy.Rules {
	out := policy.Rules{Profile: r.Profile, Allow: r.Allow, AlsoAllow: r.AlsoAllow, Deny: r.Deny}

	for _, a := range r.Ask {
		var when map[string][]string
		for k, v := range a.When {
			if when == nil {
				when = map[string][]string{}
			}
			when[k] = v
		}
		out.Ask = append(out.Ask, policy.AskRule{Tools: a.Tool, When: when})
	}
	if len(r.ByProvider) > 0 {
		out.ByProvider = map[string]policy.Rules{}
		for k, v := range r.ByProvider {
			out.ByProvider[k] = rules(v)
		}
	}
	return out
}

// CheckTools cross-checks the configuration against the tools of reg: every
// tool reference names a registered tool, an alias, a group or a glob that
// matches something; every profile exists; every tool settings key names a
// tool or a section, and each tool's settings have the keys and values its
// tool declares (tool.Meta.Settings). Each problem names its line and
// column; they come in file order.
func (c *Config) CheckTools(reg *registry.Registry) error {
	var errs []error
	p := &policy.Policy{}
	metas := reg.List()
	sep := cmp.Or(c.MCP.Separator, DefaultMCPSeparator)
	known := func(ref string) bool {
		ref = policy.RuleName(ref)
		if g, ok := strings.CutPrefix(ref, registry.GroupPrefix); ok {
			if _, sec := catalog.SectionOrder(g); sec || g == "core" || g == "plugins" || g == "mcp" {
				return true
			}
			if server, ok := strings.CutPrefix(g, "mcp:"); ok {
				if _, configured := c.MCPServers[server]; configured {
					return true // its tools are known once it answers
				}
			}
		}
		if _, _, ok := catalog.Lookup(ref); ok {
			return true // a catalog tool, registered or not
		}
		if _, ok := catalog.Alias(ref); ok {
			return true
		}
		for server := range c.MCPServers {
			if strings.HasPrefix(ref, server+sep) {
				return true // an imported tool, known once its server answers
			}
		}
		for i := range metas {
			if p.Matches(&metas[i], ref) {
				return true
			}
		}
		return false
	}
	var walk func(path string, r Rules)
	walk = func(path string, r Rules) {
		if r.Profile != "" && !catalog.IsProfile(r.Profile) {
			errs = append(errs, c.errorAt(path+".profile", fmt.Sprintf("unknown profile %q: use one of %s", r.Profile, strings.Join(catalog.Profiles(), ", "))))
		}
		for _, list := range []struct {
			key  string
			refs []string
		}{{"allow", r.Allow}, {"alsoAllow", r.AlsoAllow}, {"deny", r.Deny}} {
			for i, ref := range list.refs {
				if !known(ref) {
					errs = append(errs, c.errorAt(fmt.Sprintf("%s.%s[%d]", path, list.key, i), unknownRef(reg, ref)))
				}
			}
		}
		for i, a := range r.Ask {
			for j, ref := range a.Tool {
				if !known(ref) {
					errs = append(errs, c.errorAt(fmt.Sprintf("%s.ask[%d].tool[%d]", path, i, j), unknownRef(reg, ref)))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.ByProvider)) {
			walk(path+".byProvider."+pathKey(k), r.ByProvider[k])
		}
	}
	walk("$.tools", c.Tools.Rules)
	for _, id := range slices.Sorted(maps.Keys(c.Agents)) {
		walk("$.agents."+pathKey(id)+".tools", c.Agents[id].Tools)
	}
	for _, id := range slices.Sorted(maps.Keys(c.Channels)) {
		walk("$.channels."+pathKey(id)+".tools", c.Channels[id].Tools)
	}
	for _, id := range slices.Sorted(maps.Keys(c.Principals)) {
		walk("$.principals."+pathKey(id)+".tools", c.Principals[id].Tools)
	}
	walk("$.sandbox.tools", c.Sandbox.Tools)
	walk("$.subagents.tools", c.Subagents.Tools)
	errs = append(errs, c.checkSettings(reg, metas)...)
	return Join(errs...)
}

// unknownRef says that no tool, alias or group matches ref, and which
// registered tool is closest.
func unknownRef(reg *registry.Registry, ref string) string {
	msg := fmt.Sprintf("no tool, alias or group matches %q", ref)
	if close := reg.Suggest(strings.TrimPrefix(policy.RuleName(ref), registry.GroupPrefix), 1); len(close) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", close[0])
	}
	return msg
}

// pathKey writes a mapping key for a YAML path.
func pathKey(k string) string { return "'" + k + "'" }
