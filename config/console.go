package config

// Console configures the console toolbelt serve serves at / (docs/console.md):
// the web page where people watch calls and approve them.
type Console struct {
	// ApprovalTimeout is how long a call that needs approval, and has no
	// terminal and no MCP client to ask, waits for a decision in the
	// console before it is denied (default 5m).
	ApprovalTimeout Duration `yaml:"approvalTimeout" default:"5m"`
	// Owners are the principals of mcp.tokens who are the console's
	// owners: they approve, deny and undo calls. Other principals only
	// see. The holder of mcp.token is always an owner.
	Owners []string `yaml:"owners"`
	// AuditHead is a head of the audit chain saved earlier (SEQ:HASH, from
	// toolbelt audit head): the console's "verify chain" checks the log
	// against it, as toolbelt audit verify --head does.
	AuditHead string `yaml:"auditHead"`
}
