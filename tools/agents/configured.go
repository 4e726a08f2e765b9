package agents

import "github.com/toolbelt/toolbelt/tool"

// ListService is the key of the configured agents a tool context carries;
// agents_list and the session tools are unavailable without them, and the
// cron tool checks the agents a schedule messages against them.
var ListService = tool.NewService[[]tool.AgentInfo]()

// Configured returns the configured agents tc carries.
func Configured(tc *tool.Context) []tool.AgentInfo {
	l, _ := ListService.Get(tc)
	return l
}

// Caller returns the configured agent the call runs as, and false when it
// runs as none (or as an agent the configuration does not hold).
func Caller(tc *tool.Context) (tool.AgentInfo, bool) {
	if tc == nil || tc.AgentID == "" {
		return tool.AgentInfo{}, false
	}
	for _, a := range Configured(tc) {
		if a.ID == tc.AgentID {
			return a, true
		}
	}
	return tool.AgentInfo{}, false
}
