package toolbelt_test

import (
	"testing"

	"github.com/toolbelt/toolbelt"
)

// TestLiveConfigKey: the policy and mode keys a running server takes at
// once; every other key (listeners, channels' settings, agents' models)
// waits for a restart.
func TestLiveConfigKey(t *testing.T) {
	t.Parallel()
	for key, live := range map[string]bool{
		"mode": true, "tools.deny": true, "tools.ask": true, "tools.byProvider.openai.deny": true, "tools.profile": true,
		"agents.coder.tools.allow": true, "agents.coder.mode": true, "channels.team.tools.deny": true,
		"principals.bob": true, "principals.bob.tools.ask": true, "sandbox.tools.deny": true, "subagents.tools.allow": true,
		"mcp.addr": false, "tools.dirs": false, "tools.browser.allowHosts": false, "channels.team.rateLimit": false,
		"channels.team": false, "agents.coder.model": false, "agents.coder": false, "mode.x": false, "model": false, "console.enabled": false,
	} {
		if got := toolbelt.LiveConfigKey(key); got != live {
			t.Errorf("LiveConfigKey(%q) = %v, want %v", key, got, live)
		}
	}
}
