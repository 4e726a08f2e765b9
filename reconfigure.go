package toolbelt

import (
	"context"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/policy"
)

// PrepareConfig checks that the running root can take what of cfg — the
// configuration file as changed, parsed — applies without a restart (see
// LiveConfigKey), and returns what applies it: the tool policy, every
// layer of it (tools, agents.<id>.tools, channels.<id>.tools, principals,
// sandbox, subagents), and the permission modes (mode,
// agents.<id>.mode), for the next call of every runner and the console.
// Bypass mode is refused where it may not run, as at the start; then
// nothing is to be applied, nor the file written.
func (tb *Toolbelt) PrepareConfig(ctx context.Context, cfg *config.Config) (apply func(), err error) {
	if tb.policy == nil || tb.modes == nil {
		return nil, ErrToolsOnly
	}
	base, agents := cfg.Modes()
	if policy.NewModeSwitch(base, agents).Uses(policy.ModeBypass) {
		if err := tb.bypassPossible(ctx); err != nil {
			return nil, err
		}
	}
	p := cfg.Policy()
	return func() {
		tb.policy.Replace(p)
		tb.modes.Configure(base, agents)
	}, nil
}

// LiveConfigKey reports whether a change of the configuration key (a
// dotted path, as the gateway tool's config.patch names it) is taken by
// a running server through PrepareConfig: the policy keys of tools
// (profile, allow, alsoAllow, deny, ask, byProvider), the tools of an
// agent, a channel, a principal, the sandbox and sub-agents, and the
// modes (mode, agents.<id>.mode). Any other key takes effect at a restart.
func LiveConfigKey(key string) bool {
	k := strings.Split(key, ".")
	switch k[0] {
	case "mode":
		return len(k) == 1
	case "tools":
		return len(k) >= 2 && slices.Contains(config.PolicyKeys, k[1])
	case "sandbox", "subagents":
		return len(k) >= 2 && k[1] == "tools"
	case "principals": // a principal has nothing but its tools
		return len(k) >= 2 && (len(k) == 2 || k[2] == "tools")
	case "agents":
		return len(k) >= 3 && (k[2] == "tools" || k[2] == "mode" && len(k) == 3)
	case "channels":
		return len(k) >= 3 && k[2] == "tools"
	}
	return false
}
