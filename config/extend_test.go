package config

import (
	"strings"
	"testing"
	"time"
)

func TestToolDirsAndHooks(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte(`
tools:
  profile: coding
  dirs:
    - ~/my-tools
    - path: ./tools
      trusted: true
hooks:
  before:
    - name: guard
      tools: [exec, "fs_*", group:web]
      command: ./hooks/guard.sh
      timeout: 3s
      priority: 5
  after:
    - command: logger
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Tools.DirsSet || len(c.Tools.Dirs) != 2 || c.Tools.Dirs[0] != (ToolDir{Path: "~/my-tools"}) || c.Tools.Dirs[1] != (ToolDir{Path: "./tools", Trusted: true}) {
		t.Errorf("dirs = %+v (set %v)", c.Tools.Dirs, c.Tools.DirsSet)
	}
	if c.Tools.Profile != "coding" {
		t.Errorf("profile = %q: dirs must not disturb the policy keys", c.Tools.Profile)
	}
	b := c.Hooks.Before
	if len(b) != 1 || b[0].Name != "guard" || strings.Join(b[0].Tools, ",") != "exec,fs_*,group:web" || b[0].Timeout.D() != 3*time.Second || b[0].Priority != 5 {
		t.Errorf("before = %+v", b)
	}
	if len(c.Hooks.After) != 1 || c.Hooks.After[0].Command != "logger" {
		t.Errorf("after = %+v", c.Hooks.After)
	}
	if _, ok := c.Tools.Settings["dirs"]; ok {
		t.Error("dirs was also kept as a tool's settings")
	}

	off, err := Parse("toolbelt.yaml", []byte("tools:\n  dirs: []\n"))
	if err != nil || !off.Tools.DirsSet || len(off.Tools.Dirs) != 0 {
		t.Errorf("dirs: [] = %+v, %v; want set and empty (the default turned off)", off.Tools.Dirs, err)
	}
}

func TestToolDirsAndHooksErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ yaml, want string }{
		"unknown key in a dir":  {"tools:\n  dirs:\n    - path: x\n      trustd: true\n", "trustd"},
		"dir without path":      {"tools:\n  dirs:\n    - trusted: true\n", "tools.dirs[0] has no path"},
		"hook without command":  {"hooks:\n  before:\n    - tools: exec\n", "hooks.before[0] needs a command"},
		"unknown hook key":      {"hooks:\n  after:\n    - command: x\n      comand: y\n", "comand"},
		"unknown hook kind":     {"hooks:\n  beforeCall: []\n", "beforeCall"},
		"command and url":       {"hooks:\n  session_start:\n    - {command: x, url: 'http://h', secret: '${S}'}\n", "hooks.session_start[0] has both a command and a url"},
		"bad secret":            {"hooks:\n  after:\n    - {url: 'http://h', secret: abc}\n", "hooks.after[0].secret: webhook secret must start with"},
		"plain http elsewhere":  {"hooks:\n  stop:\n    - {url: 'http://hooks.example.com/stop', secret: '${S}'}\n", `hooks.stop[0].url: "http://hooks.example.com/stop" must be https: plain http is allowed only to this machine`},
		"tools on an event":     {"hooks:\n  stop:\n    - {command: x, tools: [exec]}\n", "tools"},
		"lifecycle, no command": {"hooks:\n  permission_request:\n    - {name: x}\n", "hooks.permission_request[0] needs a command or a url"},
	}
	for name, c := range cases {
		_, err := Parse("toolbelt.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "toolbelt.yaml:") {
			t.Errorf("%s: err = %v, want a line error mentioning %q", name, err, c.want)
		}
	}
}
