package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/console"
	"github.com/toolbelt/toolbelt/provider"
	"github.com/toolbelt/toolbelt/tool"
)

func TestToolSchemasPerDialect(t *testing.T) {
	t.Parallel()
	tb := openRoot(t, pageYAML, waitingTool())
	tc, err := tb.Context(tool.Identity{Channel: "console", Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	tl, schemas, unavailable, err := console.ToolSchemas(tb.Registry(), provider.NewExporter(tb.Registry()), tc, "render_video")
	if err != nil || unavailable != "" || tl.Name != "render_video" {
		t.Fatalf("%q, %v, %v", unavailable, err, tl.Name)
	}
	byTarget := map[string]console.DialectSchema{}
	for _, s := range schemas {
		byTarget[s.Target] = s
	}
	if len(byTarget) != len(provider.TargetNames())-1 { // all but compat:…
		t.Errorf("targets %v, want every named one of %v", len(byTarget), provider.TargetNames())
	}
	for target, want := range map[string]string{
		"anthropic":     `"input_schema": {`,
		"gemini":        `"functionDeclarations": [`,
		"openai-strict": `"strict": true`,
		"openai":        `"function": {`,
	} {
		if s := byTarget[target]; !strings.Contains(s.JSON, want) || !strings.Contains(s.JSON, "The video's title.") {
			t.Errorf("%s lacks %s:\n%s", target, want, s.JSON)
		}
	}
}

func TestCheckConfigSaysWhereEachValueCameFrom(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolbelt.yaml")
	yaml := `limits:
  timeout: 2m
tools:
  deny: [no_such_tool]
mcp:
  tokens:
    - token: s3cr3t-token-value
      principal: ci
mcpServers:
  gone:
    command: /nonexistent/server
database: postgres://toolbelt:hunter2@db.example/toolbelt
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tb := openRoot(t, pageYAML)
	tc, err := tb.Context(tool.Identity{Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := console.CheckConfig(cfg, tb.Registry(), tc)
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "no_such_tool") || !strings.Contains(rep.Errors[0], ":4") {
		t.Errorf("errors %q, want one about no_such_tool at line 4", rep.Errors)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "/nonexistent/server") {
		t.Errorf("warnings %q, want one about the missing command", rep.Warnings)
	}
	values := map[string]console.ConfigValue{}
	for _, v := range rep.Values {
		values[v.Key] = v
	}
	for key, want := range map[string]console.ConfigValue{
		"limits.timeout":    {Value: `"2m"`, From: path + ":2"},
		"limits.maxTimeout": {Value: `"1h"`, From: "default"},
		"mcp.addr":          {Value: `"127.0.0.1:7420"`, From: "default"},
		"mcp.tokens":        {Value: `[{"owner":false,"principal":"ci","token":"[redacted]"}]`, From: path + ":7"},
		"database":          {Value: `"postgres://toolbelt:[redacted]@db.example/toolbelt"`, From: path + ":12"},
	} {
		want.Key = key
		if got := values[key]; got != want {
			t.Errorf("%s: %+v, want %+v", key, got, want)
		}
	}
	for _, v := range rep.Values {
		if strings.Contains(v.Value, "s3cr3t") || strings.Contains(v.Value, "hunter2") {
			t.Errorf("a secret is shown: %+v", v)
		}
	}
}
