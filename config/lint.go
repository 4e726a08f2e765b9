package config

import (
	_ "embed"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Template is the annotated toolbelt.yaml that `toolbelt init` writes: the
// usual settings with their defaults, and commented examples of the rest.
//
//go:embed template.yaml
var Template []byte

// Warning is something in a valid configuration that will likely not work
// as meant: a ${VAR} that is not set, a command that is not installed.
type Warning = LineError

// Lint returns warnings about what the configuration names in the world
// outside it: ${VAR} references to unset environment variables (in the
// settings of imported MCP servers and the credentials of OpenAPI tools,
// where Toolbelt expands them) and
// executables that cannot be found — the commands of imported MCP servers
// that are not disabled, and the shell and bubblewrap of tools.exec (when
// the sandbox is not required: then it is an error) — and
// the unset API key variable of tools.memory.embeddings.
// lookPath and lookupEnv are exec.LookPath and os.LookupEnv, or stand-ins.
func (c *Config) Lint(lookPath func(string) (string, error), lookupEnv func(string) (string, bool)) []*Warning {
	var out []*Warning
	warn := func(path, msg string) {
		out = append(out, c.ErrorAt(path, msg))
	}
	refs := func(path, what, v string) {
		_, missing := ExpandEnv(v, lookupEnv)
		for _, name := range missing {
			warn(path, fmt.Sprintf("%s refers to ${%s}, which is not set in this environment", what, name))
		}
	}
	for i, t := range c.MCP.Tokens {
		refs(fmt.Sprintf("$.mcp.tokens[%d].token", i), fmt.Sprintf("mcp.tokens[%d].token (%s)", i, t.Principal), t.Token)
	}
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		srv := c.MCPServers[name]
		base := "$.mcpServers.'" + name + "'"
		what := "mcpServers." + name
		for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
			refs(base+".env.'"+k+"'", what+".env."+k, srv.Env[k])
		}
		for _, k := range slices.Sorted(maps.Keys(srv.Headers)) {
			refs(base+".headers.'"+k+"'", what+".headers."+k, srv.Headers[k])
		}
		if srv.Command == "" || srv.Disabled {
			continue
		}
		if _, err := lookPath(c.commandPath(srv)); err != nil {
			warn(base+".command", fmt.Sprintf("%s.command %q is not found (%v): install it, give its absolute path, or set disabled: true", what, srv.Command, unwrapExec(err)))
		}
	}
	for i, api := range c.Tools.OpenAPI {
		base, what := fmt.Sprintf("$.tools.openapi[%d].auth", i), fmt.Sprintf("tools.openapi[%d].auth", i)
		refs(base+".value", what+".value", api.Auth.Value)
		refs(base+".clientID", what+".clientID", api.Auth.ClientID)
		refs(base+".clientSecret", what+".clientSecret", api.Auth.ClientSecret)
	}
	if exec, ok := c.Tools.Settings["exec"].(map[string]any); ok {
		if sh, ok := exec["shell"].(string); ok && sh != "" {
			if _, err := lookPath(sh); err != nil {
				warn("$.tools.exec.shell", fmt.Sprintf("tools.exec.shell %q is not found (%v)", sh, unwrapExec(err)))
			}
		}
		// A required sandbox without bubblewrap is an error (CheckTools).
		if sb, ok := exec["sandbox"].(map[string]any); ok {
			bwrap, _ := sb["bwrap"].(string)
			if required, _ := sb["required"].(bool); bwrap != "" && !required {
				if _, err := lookPath(bwrap); err != nil {
					warn("$.tools.exec.sandbox.bwrap", fmt.Sprintf("the sandbox needs bubblewrap, but %q is not found (%v): install the bubblewrap package or set tools.exec.sandbox.bwrap", bwrap, unwrapExec(err)))
				}
			}
		}
	}
	if mem, ok := c.Tools.Settings["memory"].(map[string]any); ok {
		if emb, ok := mem["embeddings"].(map[string]any); ok {
			provider, _ := emb["provider"].(string)
			keyEnv, _ := emb["apiKeyEnv"].(string)
			if keyEnv == "" {
				keyEnv = map[string]string{"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}[provider]
			}
			if keyEnv != "" && keyEnv != "-" {
				if v, ok := lookupEnv(keyEnv); !ok || v == "" {
					warn("$.tools.memory.embeddings", fmt.Sprintf("tools.memory.embeddings reads the %s API key from $%s, which is not set: memory_search will search by keywords only (set apiKeyEnv: \"-\" for a server without keys)", provider, keyEnv))
				}
			}
		}
	}
	return out
}

// commandPath is the command of a stdio server as it is looked up: a
// relative path with a slash is relative to the server's cwd.
func (c *Config) commandPath(srv MCPServer) string {
	if strings.ContainsRune(srv.Command, '/') && !filepath.IsAbs(srv.Command) && srv.Cwd != "" {
		return filepath.Join(srv.Cwd, srv.Command)
	}
	return srv.Command
}

// unwrapExec shortens exec's "exec: "x": executable file not found in
// $PATH" to the reason.
func unwrapExec(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
