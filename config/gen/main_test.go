package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// TestReferenceIsUpToDate fails when docs/config.md is not what the code
// generates; `go run ./config/gen` fixes it.
func TestReferenceIsUpToDate(t *testing.T) {
	t.Parallel()
	want, err := Generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatalf("%v: run go run ./config/gen", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/config.md is out of date: run go run ./config/gen (from the repository's root) and commit the result")
	}
}

// TestReferenceListsEveryKey: every key the configuration types declare
// appears in the reference, the shell settings under tools.exec.
func TestReferenceListsEveryKey(t *testing.T) {
	t.Parallel()
	doc, err := Generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, k := range keys(reflect.TypeFor[config.Config](), "yaml") {
		if !strings.Contains(text, "`"+k+"`") && !strings.Contains(text, "."+k+"`") && !strings.Contains(text, "."+k+".") {
			t.Errorf("the reference lacks the key %q", k)
		}
	}
	for _, k := range keys(reflect.TypeFor[shell.Config](), "json") {
		if !strings.Contains(text, "`tools.exec."+k+"`") && !strings.Contains(text, "`tools.exec.sandbox."+k+"`") && !strings.Contains(text, "`tools.exec.network."+k+"`") {
			t.Errorf("the reference lacks tools.exec key %q", k)
		}
	}
	if strings.Contains(text, "| `exec.") {
		t.Error("shell settings are listed at the top level; they live under tools:")
	}
}

// keys lists the tag names of t's fields, nested structs included.
func keys(t reflect.Type, tag string) []string { return keysOf(t, tag, map[reflect.Type]bool{}) }

func keysOf(t reflect.Type, tag string, seen map[reflect.Type]bool) []string {
	var out []string
	for t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if f.Anonymous {
			out = append(out, keysOf(f.Type, tag, seen)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
		out = append(out, keysOf(f.Type, tag, seen)...)
	}
	return out
}

// TestTemplateParses: the template toolbelt init writes is a valid
// configuration.
func TestTemplateParses(t *testing.T) {
	t.Parallel()
	if _, err := config.Parse("template.yaml", config.Template); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultTags: the `default` tags the reference shows are the defaults
// the packages apply.
func TestDefaultTags(t *testing.T) {
	t.Parallel()
	tag := func(typ reflect.Type, field string) string {
		f, ok := typ.FieldByName(field)
		if !ok {
			t.Fatalf("%s has no field %s", typ, field)
		}
		return f.Tag.Get("default")
	}
	limits, confirm, mcpT := reflect.TypeFor[config.Limits](), reflect.TypeFor[config.Confirm](), reflect.TypeFor[config.MCP]()
	dur := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name      string
		tag, want any
	}{
		{"limits.timeout", dur(tag(limits, "Timeout")), invoke.DefaultTimeout},
		{"limits.maxTimeout", dur(tag(limits, "MaxTimeout")), invoke.DefaultMaxTimeout},
		{"limits.updateInterval", dur(tag(limits, "UpdateInterval")), invoke.DefaultUpdateInterval},
		{"limits.maxResultChars", tag(limits, "MaxResultChars"), strconv.Itoa(invoke.DefaultMaxResultChars)},
		{"limits.eventMaxChars", tag(limits, "EventMaxChars"), strconv.Itoa(invoke.DefaultEventMaxChars)},
		{"confirm.timeout", dur(tag(confirm, "Timeout")), invoke.DefaultConfirmTimeout},
		{"mcp.addr", tag(mcpT, "Addr"), mcp.DefaultAddr},
		{"mcp.maxResponseBytes", tag(mcpT, "MaxResponseBytes"), strconv.Itoa(mcp.DefaultMaxResponseBytes)},
		{"mcp.separator", tag(mcpT, "Separator"), config.DefaultMCPSeparator},
		{"mcp.maxMessageBytes", tag(mcpT, "MaxMessageBytes"), strconv.Itoa(mcp.DefaultMaxBodyBytes)},
		{"mcp.maxMessageBytes (stdio)", tag(mcpT, "MaxMessageBytes"), strconv.Itoa(mcp.DefaultMaxLineBytes)},
		{"mcp.maxSessions", tag(mcpT, "MaxSessions"), strconv.Itoa(mcp.DefaultMaxSessions)},
		{"mcp.maxConnections", tag(mcpT, "MaxConnections"), strconv.Itoa(mcp.DefaultMaxConnections)},
		{"mcp.sessionIdleTimeout", dur(tag(mcpT, "SessionIdleTimeout")), mcp.DefaultSessionIdleTimeout},
		{"mcp.readHeaderTimeout", dur(tag(mcpT, "ReadHeaderTimeout")), mcp.DefaultReadHeaderTimeout},
		{"mcp.bodyTimeout", dur(tag(mcpT, "BodyTimeout")), mcp.DefaultBodyTimeout},
	} {
		if c.tag != c.want {
			t.Errorf("%s: the default tag says %v, the code applies %v", c.name, c.tag, c.want)
		}
	}
}
