package tool

import (
	"encoding/json"
	"fmt"
	"time"
)

// Meta describes a tool to registries, policy, user interfaces and people.
// Registries keep it without calling a tool's factory, so listing tools is
// cheap. Zero fields take defaults derived from the rest (see [Meta.WithDefaults]).
type Meta struct {
	// ID is the tool's name.
	ID string
	// Label is a short human title.
	Label string
	// Description is what the tool does.
	Description string
	// Summary is the line that lists the tool in compact mode (tool_search
	// and the agent's system prompt; docs/compact.md). Empty: the first
	// sentence of Description.
	Summary string
	// Section is the catalog section ("fs", "runtime", …).
	Section string
	// Profiles lists the profiles that include the tool ("minimal", "coding",
	// "messaging"); every tool is in "full".
	Profiles []string
	// Groups lists extra groups the tool belongs to, without the "group:"
	// prefix ("mcp:github"). Section and source groups are implied.
	Groups []string
	// Category is a free-form grouping for user interfaces.
	Category string
	// Version is the tool's own version.
	Version string

	// Risk is how much harm a call can do. Zero means derived: low for
	// read-only tools, high for elevated ones, medium otherwise.
	Risk Risk
	// RequiresConfirmation asks a person before every call.
	RequiresConfirmation bool
	// ConfirmationMessage is shown to the person asked.
	ConfirmationMessage string

	// Destructive tools may delete or overwrite data.
	Destructive bool
	// ReadOnly tools do not change their environment.
	ReadOnly bool
	// Idempotent tools may be repeated with the same arguments to no further effect.
	Idempotent bool
	// OpenWorld tools reach outside the workspace (the web, other systems).
	OpenWorld bool

	// Timeout bounds one call; zero means the runner's default.
	Timeout time.Duration
	// EstimatedTime is how long a call usually takes, for user interfaces.
	EstimatedTime time.Duration
	// Async tools start work that outlives the call (durable jobs).
	Async bool
	// OwnerOnly tools are offered and run only for callers known to be the owner.
	OwnerOnly bool
	// Optional tools are offered only when asked for by name or group.
	Optional bool
	// Capabilities flags what the tool may do.
	Capabilities Capabilities
	// Source says where the tool comes from. Zero means [SourcePlugin].
	Source Source
	// ExternalContent marks tools whose text comes from outside (web pages,
	// emails, webhooks): the pipeline wraps it as untrusted content.
	ExternalContent bool
	// ParamAliases maps argument names models commonly use to the tool's own
	// ("file_path" → "path"); the pipeline renames an alias at any level of the
	// arguments where the schema declares the name it stands for and it is absent.
	ParamAliases map[string]string
	// Settings is the type of the tool's settings in the configuration
	// (tools.<SettingsKey> in toolbelt.yaml), as a pointer to its zero
	// value: a struct with JSON tags, which the configuration's keys and
	// values are checked against when it is loaded, and which may check
	// the values further ([SettingsChecker]). A tool whose settings are
	// described by a JSON Schema instead (a directory tool's) gives that
	// *jsonschema.Schema: the settings are checked against it, a key
	// outside an object's properties refused where the schema says
	// additionalProperties: false. Nil: the tool takes none.
	Settings any `json:"-"`
	// SettingsKey is the key of the settings when it is not the tool's
	// ID: tools that share settings share a key (exec and process share
	// "exec").
	SettingsKey string `json:"-"`
}

// Capabilities flags what a tool may do beyond answering.
type Capabilities struct {
	// Background: the tool can keep work running after it returns.
	Background bool `json:"background,omitempty"`
	// PTY: the tool can run programs in a pseudo-terminal.
	PTY bool `json:"pty,omitempty"`
	// Elevated: the tool can act with more privilege than the agent.
	Elevated bool `json:"elevated,omitempty"`
	// WorkspaceOnly: the tool acts only inside the workspace.
	WorkspaceOnly bool `json:"workspaceOnly,omitempty"`
}

// Source says where a tool comes from.
type Source string

// The tool sources.
const (
	SourceCore      Source = "core"      // Toolbelt's built-in tools
	SourcePlugin    Source = "plugin"    // tools registered by the embedding program
	SourceMCP       Source = "mcp"       // tools imported from an MCP server
	SourceDirectory Source = "directory" // tools loaded from a directory
	SourceOpenAPI   Source = "openapi"   // operations imported from an OpenAPI document
)

// Risk is how much harm one call of a tool can do.
type Risk uint8

// The risk levels. The zero value means "not set".
const (
	RiskUnset Risk = iota
	RiskLow
	RiskMedium
	RiskHigh
)

var riskNames = [...]string{"", "low", "medium", "high"}

func (r Risk) String() string {
	if int(r) < len(riskNames) {
		return riskNames[r]
	}
	return fmt.Sprintf("risk(%d)", uint8(r))
}

// ParseRisk parses "low", "medium" or "high".
func ParseRisk(s string) (Risk, error) {
	for i, n := range riskNames {
		if n == s && i > 0 {
			return Risk(i), nil
		}
	}
	return RiskUnset, fmt.Errorf("unknown risk level %q: use low, medium or high", s)
}

// MarshalText encodes the risk as its name.
func (r Risk) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText decodes a risk name; the empty string is [RiskUnset].
func (r *Risk) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*r = RiskUnset
		return nil
	}
	v, err := ParseRisk(string(b))
	*r = v
	return err
}

// WithDefaults returns m with its zero fields derived from the rest:
//   - Label from ID ("web_fetch" → "Web Fetch");
//   - a read-only tool is not destructive, is idempotent and is low risk;
//   - an elevated tool is high risk; any other tool is medium risk;
//   - Source is [SourcePlugin].
func (m Meta) WithDefaults() Meta {
	if m.Label == "" {
		m.Label = LabelFromName(m.ID)
	}
	if m.ReadOnly {
		m.Destructive = false
		m.Idempotent = true
	}
	if m.Risk == RiskUnset {
		switch {
		case m.Capabilities.Elevated:
			m.Risk = RiskHigh
		case m.ReadOnly:
			m.Risk = RiskLow
		default:
			m.Risk = RiskMedium
		}
	}
	if m.Source == "" {
		m.Source = SourcePlugin
	}
	return m
}

// InProfile reports whether the tool belongs to profile. Every tool belongs to
// "full"; the empty profile means no restriction.
func (m *Meta) InProfile(profile string) bool {
	if profile == "" || profile == "full" {
		return true
	}
	for _, p := range m.Profiles {
		if p == profile {
			return true
		}
	}
	return false
}

// metaJSON is Meta's wire form: durations as Go duration strings ("30s").
type metaJSON struct {
	ID                   string            `json:"id"`
	Label                string            `json:"label,omitempty"`
	Description          string            `json:"description,omitempty"`
	Section              string            `json:"section,omitempty"`
	Profiles             []string          `json:"profiles,omitempty"`
	Groups               []string          `json:"groups,omitempty"`
	Category             string            `json:"category,omitempty"`
	Version              string            `json:"version,omitempty"`
	Risk                 Risk              `json:"risk,omitzero"`
	RequiresConfirmation bool              `json:"requiresConfirmation,omitempty"`
	ConfirmationMessage  string            `json:"confirmationMessage,omitempty"`
	Destructive          bool              `json:"destructive,omitempty"`
	ReadOnly             bool              `json:"readOnly,omitempty"`
	Idempotent           bool              `json:"idempotent,omitempty"`
	OpenWorld            bool              `json:"openWorld,omitempty"`
	Timeout              string            `json:"timeout,omitempty"`
	EstimatedTime        string            `json:"estimatedTime,omitempty"`
	Async                bool              `json:"async,omitempty"`
	OwnerOnly            bool              `json:"ownerOnly,omitempty"`
	Optional             bool              `json:"optional,omitempty"`
	Capabilities         Capabilities      `json:"capabilities,omitzero"`
	Source               Source            `json:"source,omitempty"`
	ExternalContent      bool              `json:"externalContent,omitempty"`
	ParamAliases         map[string]string `json:"paramAliases,omitempty"`
}

// MarshalJSON encodes m with camelCase keys and durations as strings ("30s").
func (m Meta) MarshalJSON() ([]byte, error) {
	j := metaJSON{
		ID: m.ID, Label: m.Label, Description: m.Description, Section: m.Section,
		Profiles: m.Profiles, Groups: m.Groups, Category: m.Category, Version: m.Version,
		Risk: m.Risk, RequiresConfirmation: m.RequiresConfirmation, ConfirmationMessage: m.ConfirmationMessage,
		Destructive: m.Destructive, ReadOnly: m.ReadOnly, Idempotent: m.Idempotent, OpenWorld: m.OpenWorld,
		Async: m.Async, OwnerOnly: m.OwnerOnly, Optional: m.Optional, Capabilities: m.Capabilities, Source: m.Source,
		ExternalContent: m.ExternalContent, ParamAliases: m.ParamAliases,
	}
	if m.Timeout != 0 {
		j.Timeout = m.Timeout.String()
	}
	if m.EstimatedTime != 0 {
		j.EstimatedTime = m.EstimatedTime.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (m *Meta) UnmarshalJSON(b []byte) error {
	var j metaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	var timeout, estimated time.Duration
	var err error
	if j.Timeout != "" {
		if timeout, err = time.ParseDuration(j.Timeout); err != nil {
			return fmt.Errorf("meta %q: timeout: %w", j.ID, err)
		}
	}
	if j.EstimatedTime != "" {
		if estimated, err = time.ParseDuration(j.EstimatedTime); err != nil {
			return fmt.Errorf("meta %q: estimatedTime: %w", j.ID, err)
		}
	}
	*m = Meta{
		ID: j.ID, Label: j.Label, Description: j.Description, Section: j.Section,
		Profiles: j.Profiles, Groups: j.Groups, Category: j.Category, Version: j.Version,
		Risk: j.Risk, RequiresConfirmation: j.RequiresConfirmation, ConfirmationMessage: j.ConfirmationMessage,
		Destructive: j.Destructive, ReadOnly: j.ReadOnly, Idempotent: j.Idempotent, OpenWorld: j.OpenWorld,
		Timeout: timeout, EstimatedTime: estimated,
		Async: j.Async, OwnerOnly: j.OwnerOnly, Optional: j.Optional, Capabilities: j.Capabilities, Source: j.Source,
		ExternalContent: j.ExternalContent, ParamAliases: j.ParamAliases,
	}
	return nil
}
