package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// ToolDir is a folder of directory tools: each sub-folder with a
// metadata.json, a schema.json and a handler is a tool. Written as a path,
// or as a mapping with path and trusted.
type ToolDir struct {
	// Path is the folder; a relative path is relative to toolbelt.yaml, and
	// ~ is the home directory.
	Path string `yaml:"path"`
	// Trusted vouches for the folder's tools wherever it lies. Without it,
	// a tool the agent can reach (in a workspace, or linked into one) is
	// untrusted: its handler runs contained unless a person approves the
	// call, and its metadata is not taken at its word (never low risk or
	// read-only; owner-only, async and env are refused).
	Trusted bool `yaml:"trusted" default:"true outside the workspace"`
}

// UnmarshalYAML accepts a path or a mapping.
func (d *ToolDir) UnmarshalYAML(node ast.Node) error {
	if s, ok := node.(*ast.StringNode); ok {
		d.Path = s.Value
		return nil
	}
	type plain ToolDir
	var p plain
	if err := yaml.NodeToValue(node, &p); err != nil {
		return err
	}
	*d = ToolDir(p)
	return nil
}

// Hooks are commands run around tool calls.
type Hooks struct {
	// Before run before a call: they may block it or change its arguments.
	Before []Hook `yaml:"before"`
	// After run after a call, to observe it.
	After []Hook `yaml:"after"`
	// Persist run before a result message is stored: they may rewrite
	// what is stored (never what the caller gets).
	Persist []Hook `yaml:"persist"`
}

// Hook is a command run around the calls it matches. It reads the call as
// JSON on stdin; see docs/directory-tools.md for what it may answer.
type Hook struct {
	// Name names the hook in events and logs (default: the command).
	Name string `yaml:"name"`
	// Tools selects the calls: names, * globs and group: references (default:
	// every call); write selects every tool that changes files (write, edit,
	// apply_patch, tts).
	Tools Names `yaml:"tools"`
	// Command runs with sh -c, in the directory of toolbelt.yaml. Keep hook
	// scripts where the agent cannot write (not in the workspace).
	Command string `yaml:"command"`
	// Timeout bounds one run; a before hook that runs out of time blocks the
	// call (default 10s).
	Timeout Duration `yaml:"timeout" default:"10s"`
	// Priority orders before hooks, higher first (default 0).
	Priority int `yaml:"priority" default:"0"`
}

// validateHooks checks the hooks' commands.
func (c *Config) validateHooks() []error {
	var errs []error
	for kind, hooks := range map[string][]Hook{"before": c.Hooks.Before, "after": c.Hooks.After, "persist": c.Hooks.Persist} {
		for i, h := range hooks {
			path := fmt.Sprintf("$.hooks.%s[%d]", kind, i)
			if strings.TrimSpace(h.Command) == "" {
				errs = append(errs, c.errorAt(path, fmt.Sprintf("hooks.%s[%d] needs a command", kind, i)))
			}
			if h.Timeout < 0 {
				errs = append(errs, c.errorAt(path+".timeout", fmt.Sprintf("hooks.%s[%d].timeout must not be negative", kind, i)))
			}
		}
	}
	return errs
}
