package config

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
)

// registryOf returns a registry of tools of these names, each with the
// metadata the registry gives it (the catalog's, for core tools).
func registryOf(t *testing.T, names ...string) *registry.Registry {
	t.Helper()
	reg := registry.New()
	for _, id := range names {
		if err := reg.Register(tool.Tool{Name: id, Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Text("ok"), nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// metas returns the metadata a registry gives tools of these names, by
// name.
func metas(t *testing.T, names ...string) map[string]tool.Meta {
	t.Helper()
	reg := registryOf(t, names...)
	out := map[string]tool.Meta{}
	for _, id := range names {
		out[id], _ = reg.Meta(id)
	}
	return out
}

const sampleConfig = `# policy
tools:
  profile: coding
  alsoAllow: [web_fetch]
  deny: [exec]
  ask:
    - tool: write
      when: {path: ["**/.env*"]}
  byProvider:
    xai: {deny: [group:web]}
  exec:
    defaultTimeout: 60
agents:
  reviewer:
    tools:
      allow: [read, grep, find, ls]
channels:
  discord:
    tools: {deny: [group:fs]}
sandbox:
  tools: {deny: [process]}
`

func TestPolicy(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte(sampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	meta := metas(t, "exec", "read", "web_fetch", "write", "grep", "process")
	p := c.Policy()
	for _, tc := range []struct {
		req  policy.Request
		want policy.Decision
	}{
		{policy.Request{Meta: meta["exec"]}, policy.Deny},
		{policy.Request{Meta: meta["read"]}, policy.Allow},
		{policy.Request{Meta: meta["web_fetch"]}, policy.Allow},
		{policy.Request{Meta: meta["web_fetch"], Provider: "xai"}, policy.Deny},
		{policy.Request{Meta: meta["write"], Caller: tool.Identity{AgentID: "reviewer"}}, policy.Deny},
		{policy.Request{Meta: meta["grep"], Caller: tool.Identity{AgentID: "reviewer"}}, policy.Allow},
		{policy.Request{Meta: meta["write"], Args: map[string]any{"path": ".env"}}, policy.Ask},
		{policy.Request{Meta: meta["read"], Caller: tool.Identity{Channel: "discord"}}, policy.Deny},
		{policy.Request{Meta: meta["process"], Caller: tool.Identity{Sandboxed: true}}, policy.Deny},
	} {
		if got := p.Decide(tc.req); got.Decision != tc.want {
			t.Errorf("%+v: %v (%s)", tc.req, got.Decision, got.Reason)
		}
	}
	if c.Tools.Settings["exec"].(map[string]any)["defaultTimeout"] != uint64(60) {
		t.Errorf("settings %#v", c.Tools.Settings)
	}
}

func TestCheckTools(t *testing.T) {
	t.Parallel()
	reg, closer := tools.Core()
	defer closer.Close()
	good, err := Parse("toolbelt.yaml", []byte(sampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := good.CheckTools(reg); err != nil {
		t.Errorf("good config: %v", err)
	}
	bad, err := Parse("toolbelt.yaml", []byte(`tools:
  profile: everything
  deny: [exce, "group:nope", "web_*"]
  ask:
    - tool: [wirte]
  execc: {defaultTimeout: 5}
  Deny: {x: 1}
agents:
  a:
    tools: {allow: [nope]}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = bad.CheckTools(reg)
	var msgs []string
	for _, e := range unwrap(err) {
		msgs = append(msgs, e.Error())
	}
	want := []string{
		`toolbelt.yaml:2:12: unknown profile "everything": use one of minimal, coding, messaging, full`,
		`toolbelt.yaml:3:10: no tool, alias or group matches "exce"; did you mean "exec"?`,
		`toolbelt.yaml:3:16: no tool, alias or group matches "group:nope"`,
		`toolbelt.yaml:5:14: no tool, alias or group matches "wirte"; did you mean "write"?`,
		`toolbelt.yaml:6:3: tools.execc: no tool or section is named "execc", and it is not a policy key (profile, allow, alsoAllow, deny, ask, byProvider); did you mean "exec"?`,
		`toolbelt.yaml:7:3: tools.Deny: no tool or section is named "Deny", and it is not a policy key (profile, allow, alsoAllow, deny, ask, byProvider); did you mean "deny"?`,
		`toolbelt.yaml:10:21: no tool, alias or group matches "nope"`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}

	// The tools of a configured MCP server are known by their prefix even
	// while the server is not running; another prefix is not.
	mcp, err := Parse("toolbelt.yaml", []byte(`mcpServers:
  github: {command: github-mcp}
mcp: {separator: "."}
tools:
  deny: [github.delete_repository, gitlab.delete_project, github__x, "group:mcp:github", "group:mcp:githb"]
`))
	if err != nil {
		t.Fatal(err)
	}
	msgs = msgs[:0]
	for _, e := range unwrap(mcp.CheckTools(reg)) {
		msgs = append(msgs, e.Error())
	}
	want = []string{
		`toolbelt.yaml:5:36: no tool, alias or group matches "gitlab.delete_project"`,
		`toolbelt.yaml:5:59: no tool, alias or group matches "github__x"`,
		`toolbelt.yaml:5:90: no tool, alias or group matches "group:mcp:githb"`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("mcp prefixes, got:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func unwrap(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{errors.Unwrap(err)}
}
