package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/toolbelt/toolbelt/internal/stdwebhook"
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

// Hooks are commands or HTTP endpoints run around tool calls and at the
// agent loop's lifecycle events (docs/hooks.md).
type Hooks struct {
	// Before run before a call: they may block it or change its arguments.
	Before []Hook `yaml:"before"`
	// After run after a call, to observe it.
	After []Hook `yaml:"after"`
	// Persist run before a result message is stored: they may rewrite
	// what is stored (never what the caller gets).
	Persist []Hook `yaml:"persist"`
	// SessionStart run before an agent session's first run; they may add
	// context.
	SessionStart []EventHook `yaml:"session_start"`
	// SessionEnd run when an agent session ends.
	SessionEnd []EventHook `yaml:"session_end"`
	// UserPromptSubmit see a prompt before the model does: they may add
	// context or block it (a failing hook blocks it).
	UserPromptSubmit []EventHook `yaml:"user_prompt_submit"`
	// Stop run when the model would stop: they may make the run go on,
	// with a reason the model reads (at most 3 times a run).
	Stop []EventHook `yaml:"stop"`
	// PreCompact run before a conversation is compacted.
	PreCompact []EventHook `yaml:"pre_compact"`
	// SubagentStart and SubagentStop run when a sub-agent starts and when
	// its run has ended.
	SubagentStart []EventHook `yaml:"subagent_start"`
	SubagentStop  []EventHook `yaml:"subagent_stop"`
	// PermissionRequest decide about a call that needs a person's
	// approval, before the person is asked: allow (with updated input),
	// deny or ask. A failing hook blocks the call.
	PermissionRequest []EventHook `yaml:"permission_request"`
}

// Hook is a command or an HTTP endpoint run around the calls it matches.
// It reads the call as JSON (on stdin, or as the POST body); see
// docs/hooks.md for what it may answer.
type Hook struct {
	// Name names the hook in events and logs (default: the command or URL).
	Name string `yaml:"name"`
	// Tools selects the calls: names, * globs and group: references (default:
	// every call); write selects every tool that changes files (write, edit,
	// apply_patch, tts).
	Tools Names `yaml:"tools"`
	// Command runs with sh -c, in the directory of toolbelt.yaml. Keep hook
	// scripts where the agent cannot write (not in the workspace). A hook
	// has a command or a url.
	Command string `yaml:"command"`
	// URL makes it an HTTP hook: the input is POSTed to it as JSON, signed
	// the Standard Webhooks way under secret; the response body is the
	// answer, a status other than 2xx a failure.
	URL string `yaml:"url"`
	// Secret signs an HTTP hook's requests: "whsec_" and the base64 of at
	// least 16 random bytes; ${NAME} reads it from the environment.
	Secret string `yaml:"secret"`
	// Timeout bounds one run; a before hook that runs out of time blocks the
	// call (default 10s).
	Timeout Duration `yaml:"timeout" default:"10s"`
	// Priority orders before hooks, higher first (default 0).
	Priority int `yaml:"priority" default:"0"`
}

// EventHook is a command or an HTTP endpoint run at a lifecycle event. It
// reads the event as JSON; see docs/hooks.md for what it may answer.
type EventHook struct {
	// Name names the hook in events and logs (default: the command or URL).
	Name string `yaml:"name"`
	// Command runs with sh -c, in the directory of toolbelt.yaml; a hook
	// has a command or a url.
	Command string `yaml:"command"`
	// URL makes it an HTTP hook, its requests signed under secret (as a
	// tool hook's).
	URL string `yaml:"url"`
	// Secret signs an HTTP hook's requests ("whsec_…", or ${NAME}).
	Secret string `yaml:"secret"`
	// Timeout bounds one run; a hook of an event that can block (its
	// prompt, its call) that runs out of time blocks it (default 10s).
	Timeout Duration `yaml:"timeout" default:"10s"`
}

// Hook returns the event hook as a tool hook of every call.
func (h EventHook) Hook() Hook {
	return Hook{Name: h.Name, Command: h.Command, URL: h.URL, Secret: h.Secret, Timeout: h.Timeout}
}

// events returns the lifecycle hooks by their key.
func (h Hooks) events() map[string][]EventHook {
	return map[string][]EventHook{
		"session_start": h.SessionStart, "session_end": h.SessionEnd, "user_prompt_submit": h.UserPromptSubmit, "stop": h.Stop,
		"pre_compact": h.PreCompact, "subagent_start": h.SubagentStart, "subagent_stop": h.SubagentStop, "permission_request": h.PermissionRequest,
	}
}

// validateHooks checks the hooks: each has a command or a url with its
// secret, and a timeout that is not negative.
func (c *Config) validateHooks() []error {
	all := map[string][]Hook{"before": c.Hooks.Before, "after": c.Hooks.After, "persist": c.Hooks.Persist}
	for kind, hooks := range c.Hooks.events() {
		for _, h := range hooks {
			all[kind] = append(all[kind], h.Hook())
		}
	}
	var errs []error
	for _, kind := range slices.Sorted(maps.Keys(all)) {
		for i, h := range all[kind] {
			errs = append(errs, c.validateHook(fmt.Sprintf("hooks.%s[%d]", kind, i), h)...)
		}
	}
	return errs
}

// validateHook checks the hook at key.
func (c *Config) validateHook(key string, h Hook) []error {
	var errs []error
	path := "$." + key
	command, url := strings.TrimSpace(h.Command) != "", strings.TrimSpace(h.URL) != ""
	switch {
	case !command && !url:
		errs = append(errs, c.errorAt(path, key+" needs a command or a url"))
	case command && url:
		errs = append(errs, c.errorAt(path, key+" has both a command and a url: give one"))
	case url && h.Secret == "":
		errs = append(errs, c.errorAt(path, key+" needs a secret to sign its requests: "+`"whsec_" followed by base64; make one with: echo whsec_$(head -c 32 /dev/urandom | base64)`))
	case url && !strings.Contains(h.Secret, "${"):
		if err := stdwebhook.CheckSecret(h.Secret); err != nil {
			errs = append(errs, c.errorAt(path+".secret", key+".secret: "+err.Error()))
		}
	}
	if url && !strings.Contains(h.URL, "${") {
		if err := stdwebhook.CheckEndpoint(h.URL); err != nil {
			errs = append(errs, c.errorAt(path+".url", key+".url: "+err.Error()))
		}
	}
	if h.Timeout < 0 {
		errs = append(errs, c.errorAt(path+".timeout", key+".timeout must not be negative"))
	}
	return errs
}
