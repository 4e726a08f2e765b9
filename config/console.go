package config

// Console configures the console toolbelt serve serves at / (docs/console.md):
// the web page where people watch calls and approve them.
type Console struct {
	// ApprovalTimeout is how long a call that needs approval, and has no
	// terminal and no MCP client to ask, waits for a decision in the
	// console before it is denied (default 5m).
	ApprovalTimeout Duration `yaml:"approvalTimeout" default:"5m"`
}
