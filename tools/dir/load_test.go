package dir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func TestParseMetadataErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, json string
		line       int
		want       []string
	}{
		{"unknown field with suggestion", "{\n  \"name\": \"x\",\n  \"description\": \"d\",\n  \"riskLevl\": \"low\"\n}", 4, []string{`unknown field "riskLevl"`, `did you mean "riskLevel"?`}},
		{"unknown field far from any", "{\"name\": \"x\",\n\"zzzzzzzz\": 1}", 2, []string{`unknown field "zzzzzzzz"`, "known fields:"}},
		{"wrong type", "{\n\"name\": \"x\",\n\"description\": \"d\",\n\"timeout\": \"30\"\n}", 4, []string{`field "timeout" must be a number, not string`}},
		{"bad risk", "{\"name\": \"x\", \"description\": \"d\",\n \"riskLevel\": \"extreme\"}", 2, []string{`unknown risk level "extreme"`}},
		{"bad name", `{"name": "my tool", "description": "d"}`, 1, []string{"name:", "' '"}},
		{"no description", `{"name": "x"}`, 0, []string{"description is missing"}},
		{"async without a type", "{\"name\": \"x\", \"description\": \"d\",\n\"async\": true}", 2, []string{"asyncType is missing", "polling or webhook"}},
		{"webhook without a path", "{\"name\": \"x\", \"description\": \"d\", \"async\": true,\n\"asyncType\": \"webhook\"}", 2, []string{"needs webhookPath", "/webhooks/video"}},
		{"async sandboxed", "{\"name\": \"x\", \"description\": \"d\", \"async\": true, \"asyncType\": \"polling\",\n\"sandbox\": true}", 2, []string{"cannot run in the sandbox"}},
		{"async fields without async", "{\"name\": \"x\", \"description\": \"d\",\n\"pollingInterval\": 5}", 2, []string{"apply only to async tools"}},
		{"syntax", "{\"name\": \"x\",\n\"description\": }", 2, []string{"not valid JSON"}},
		{"not an object", `["x"]`, 1, []string{"must be a JSON object"}},
		{"duplicate", "{\"name\": \"x\",\n\"name\": \"y\"}", 2, []string{`field "name" appears twice`}},
		{"trailing", `{"name": "x", "description": "d"} {}`, 1, []string{"unexpected text after"}},
		{"unknown profile", `{"name": "x", "description": "d", "profiles": ["huge"]}`, 1, []string{`unknown profile "huge"`}},
		{"handler path", `{"name": "x", "description": "d", "handler": "../evil.sh"}`, 1, []string{"must be a file name"}},
		{"readOnly destructive", `{"name": "x", "description": "d", "readOnly": true, "destructive": true}`, 1, []string{"both readOnly and destructive"}},
		{"confirmation message unused", `{"name": "x", "description": "d", "confirmationMessage": "sure?"}`, 1, []string{"shown only when a person is asked"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseMetadata("tools/x/metadata.json", []byte(c.json))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FileError", err)
			}
			if c.line > 0 && fe.Line != c.line {
				t.Errorf("line = %d, want %d (%v)", fe.Line, c.line, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "tools/x/metadata.json:") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestParseMetadataFull(t *testing.T) {
	t.Parallel()
	b := []byte(`{
  "$schema": "https://example.invalid/metadata.schema.json",
  "name": "deploy", "label": "Deploy", "description": "Deploys.", "version": "1.2.0", "category": "ops",
  "riskLevel": "high", "timeout": 90, "requiresConfirmation": true, "confirmationMessage": "Deploy now?",
  "destructive": true, "estimatedTime": 12, "section": "ops", "profiles": ["coding"], "ownerOnly": true,
  "openWorld": true, "sandbox": false, "env": ["DEPLOY_TOKEN"], "handler": "run.sh", "interpreter": "bash"
}`)
	m, err := ParseMetadata("metadata.json", b)
	if err != nil {
		t.Fatal(err)
	}
	got := m.meta(true)
	if got.Risk != tool.RiskHigh || !got.RequiresConfirmation || got.ConfirmationMessage != "Deploy now?" ||
		got.Timeout.Seconds() != 90 || !got.OwnerOnly || got.Section != "ops" || got.Source != tool.SourceDirectory ||
		got.EstimatedTime.Seconds() != 12 || !got.Destructive || !got.OpenWorld || got.Version != "1.2.0" {
		t.Errorf("meta = %+v", got)
	}
}

func TestUntrustedFolderClaimsAreNotTaken(t *testing.T) {
	t.Parallel()
	m, err := ParseMetadata("metadata.json", []byte(`{"name":"x","description":"d","riskLevel":"low","readOnly":true,"ownerOnly":true,"section":"fs","profiles":["minimal"]}`))
	if err != nil {
		t.Fatal(err)
	}
	trusted, untrusted := m.meta(true), m.meta(false)
	if trusted.Risk != tool.RiskLow || !trusted.ReadOnly || !trusted.OwnerOnly || trusted.Section != "fs" || len(trusted.Profiles) != 1 || trusted.OpenWorld || trusted.ExternalContent {
		t.Errorf("trusted meta = %+v, want low risk, read-only, owner-only, section, profiles, closed world as written", trusted)
	}
	if untrusted.Risk != tool.RiskMedium || untrusted.ReadOnly || untrusted.OwnerOnly || len(untrusted.Profiles) != 0 || !untrusted.OpenWorld || !untrusted.ExternalContent {
		t.Errorf("untrusted meta = %+v, want medium risk, not read-only, not owner-only, in no profile, open world", untrusted)
	}
	if d := m.meta(false); d.Section != DefaultSection {
		t.Errorf("section = %q, want %q", d.Section, DefaultSection)
	}
}

func TestHandlerDiscovery(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cases := []struct {
		name  string
		files map[string]string
		argv0 string // base name of the program started; "" for an error
		err   string
	}{
		{"sh", map[string]string{"handler.sh": "echo"}, "bash", ""},
		{"py", map[string]string{"handler.py": "print()"}, "python3", ""},
		{"js", map[string]string{"handler.js": ""}, "node", ""},
		{"exe", map[string]string{"+handler": "#!/bin/sh\n"}, "handler", ""},
		{"exe_not_executable", map[string]string{"handler": "#!/bin/sh\n"}, "", "is not executable"},
		{"none", map[string]string{"README": ""}, "", "no handler: add one of handler, handler.py"},
		{"several", map[string]string{"handler.sh": "", "handler.py": ""}, "", "several handlers (handler.py, handler.sh)"},
	}
	for _, c := range cases {
		c.files["metadata.json"] = meta(c.name, nil)
		folder := writeTool(t, parent, c.name, c.files)
		dt, err := Load(folder, Options{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := filepath.Base(dt.Argv[0]); got != c.argv0 {
			t.Errorf("%s: argv = %q, want %s first", c.name, dt.Argv, c.argv0)
		}
		if dt.Argv[len(dt.Argv)-1] != dt.Handler {
			t.Errorf("%s: argv = %q does not end with the handler %s", c.name, dt.Argv, dt.Handler)
		}
	}
}

func TestInterpreterMissing(t *testing.T) {
	t.Parallel()
	folder := writeTool(t, t.TempDir(), "x", map[string]string{
		"metadata.json": meta("x", map[string]any{"interpreter": "no-such-interpreter-here"}),
		"handler.py":    "",
	})
	_, err := Load(folder, Options{})
	if err == nil || !strings.Contains(err.Error(), `the interpreter "no-such-interpreter-here" that metadata.json names is not on PATH`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cases := map[string]struct{ schema, want string }{
		"syntax":     {"{\n\"type\": \"object\",\n}", "schema.json:3: not valid JSON"},
		"array":      {`[]`, "must be a JSON object"},
		"not object": {`{"type":"string"}`, "parameters must describe a JSON object"},
		"bad schema": {`{"type":"object","properties":{"a":{"type":"strung"}}}`, "does not compile"},
	}
	for name, c := range cases {
		folder := writeTool(t, parent, strings.ReplaceAll(name, " ", "_"), map[string]string{
			"metadata.json": meta("x", nil), "schema.json": c.schema, "handler.sh": "",
		})
		_, err := Load(folder, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

func TestLoadDirsSkipsBrokenTools(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	shTool(t, a, "good", `echo '{"success":true}'`, nil)
	writeTool(t, a, "broken", map[string]string{"metadata.json": `{"name":"broken","descripton":"x"}`, "handler.sh": ""})
	writeTool(t, a, "notatool", map[string]string{"README.md": "just a folder"})
	writeTool(t, a, ".hidden", map[string]string{"metadata.json": "not even json"})
	shTool(t, b, "good_again", `echo '{"success":true}'`, map[string]any{"name": "good"})

	set := LoadDirs([]Source{
		{Path: a, Trusted: true},
		{Path: b},
		{Path: filepath.Join(a, "missing"), Optional: true},
		{Path: filepath.Join(a, "configured-missing")},
	}, Options{})
	if got := set.Names(); len(got) != 1 || got[0] != "good" {
		t.Fatalf("loaded %v, want [good]", got)
	}
	var msgs []string
	for _, p := range set.Problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{
		`metadata.json:1: unknown field "descripton"; did you mean "description"?`,
		`the name "good" is already taken by the tool in`,
		"configured-missing",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("problems do not mention %q:\n%s", w, all)
		}
	}
	if len(set.Problems) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(set.Problems), all)
	}

	reg := registry.New()
	if err := reg.Register(tool.Tool{Name: "good", Description: "taken", Execute: set.Tools[0].execute}); err != nil {
		t.Fatal(err)
	}
	problems := set.Register(reg)
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), `the name "good" is taken by a tool already registered`) {
		t.Errorf("Register problems = %v", problems)
	}
}

func TestRegisteredToolIsMarkedAsDirectory(t *testing.T) {
	t.Parallel()
	a := t.TempDir()
	shTool(t, a, "marked", `echo '{"success":true}'`, nil)
	set := LoadDirs([]Source{{Path: a, Trusted: true}}, Options{})
	reg := registry.New()
	if p := set.Register(reg); len(p) != 0 {
		t.Fatal(p)
	}
	m, ok := reg.Meta("marked")
	if !ok || m.Source != tool.SourceDirectory || m.Section != DefaultSection {
		t.Errorf("meta = %+v, want source directory, section %s", m, DefaultSection)
	}
	if len(reg.List(registry.Include("group:directory"))) != 1 {
		t.Errorf("group:directory does not select the tool")
	}
}

func TestMissingMetadata(t *testing.T) {
	t.Parallel()
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "handler.sh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(folder, Options{})
	if err == nil || !strings.Contains(err.Error(), "no metadata.json") {
		t.Fatalf("err = %v", err)
	}
}

// TestMetadataFieldsReachTheRegistry: the catalog fields of metadata.json
// (label, version, category, section, profiles) are what the registry
// holds and selects by.
func TestMetadataFieldsReachTheRegistry(t *testing.T) {
	t.Parallel()
	a := t.TempDir()
	shTool(t, a, "in_coding", `echo '{"success":true}'`, map[string]any{
		"label": "In Coding", "version": "2.0.1", "category": "dev", "section": "ops", "profiles": []string{"coding"},
	})
	shTool(t, a, "in_none", `echo '{"success":true}'`, nil)
	reg := registry.New()
	if p := LoadDirs([]Source{{Path: a, Trusted: true}}, Options{}).Register(reg); len(p) != 0 {
		t.Fatal(p)
	}
	m, _ := reg.Meta("in_coding")
	if m.Label != "In Coding" || m.Version != "2.0.1" || m.Category != "dev" || m.Section != "ops" {
		t.Errorf("meta = %+v", m)
	}
	names := func(profile string) []string {
		var out []string
		for _, tt := range reg.ResolveByProfile(profile, &tool.Context{}, nil) {
			out = append(out, tt.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names("coding"); !slices.Equal(got, []string{"in_coding"}) {
		t.Errorf("profile coding selects %v", got)
	}
	if got := names("minimal"); len(got) != 0 {
		t.Errorf("profile minimal selects %v", got)
	}
	if got := names("full"); !slices.Equal(got, []string{"in_coding", "in_none"}) {
		t.Errorf("profile full selects %v", got)
	}
	if got := reg.List(registry.Section("ops")); len(got) != 1 || got[0].ID != "in_coding" {
		t.Errorf("section ops lists %v", got)
	}
}

// TestTypeScriptNeedsARuntimeThatRunsIt: a handler.ts is given to node
// only when node strips types (22.6 or later); an older node is an error
// when the tool loads, not a crash when it is called.
func TestTypeScriptNeedsARuntimeThatRunsIt(t *testing.T) {
	for _, c := range []struct {
		name, node string
		ok         bool
	}{
		{"old node", "#!/bin/sh\ncase \"$1\" in --experimental-strip-types) echo 'node: bad option: --experimental-strip-types' >&2; exit 9 ;; esac\n", false},
		{"new node", "#!/bin/sh\nexit 0\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "node"), []byte(c.node), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin) // no tsx, bun or deno
			folder := writeTool(t, t.TempDir(), "ts", map[string]string{"metadata.json": meta("ts", nil), "handler.ts": "console.log('{}')"})
			dt, err := Load(folder, Options{})
			if !c.ok {
				if err == nil || !strings.Contains(err.Error(), "handler.ts needs tsx or bun or deno or node 22.6 or later") {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err != nil || len(dt.Argv) != 3 || dt.Argv[0] != filepath.Join(bin, "node") || dt.Argv[1] != "--experimental-strip-types" {
				t.Errorf("argv = %q, %v", dt.Argv, err)
			}
		})
	}
}

// TestMetadataSummary: metadata.json's summary, the line that lists the
// tool in compact mode, reaches the registry and the resolved tool
// (Meta.Summary, which compact mode lists it by); without one it is empty,
// and compact mode falls back to the description's first sentence.
func TestMetadataSummary(t *testing.T) {
	t.Parallel()
	a := t.TempDir()
	shTool(t, a, "with_summary", `echo '{"success":true}'`, map[string]any{"summary": "Count the words of a text."})
	shTool(t, a, "without", `echo '{"success":true}'`, nil)
	reg := registry.New()
	if p := LoadDirs([]Source{{Path: a, Trusted: false}}, Options{}).Register(reg); len(p) != 0 {
		t.Fatal(p)
	}
	if m, _ := reg.Meta("with_summary"); m.Summary != "Count the words of a text." {
		t.Errorf("the registry's meta has summary %q", m.Summary)
	}
	if m, _ := reg.Meta("without"); m.Summary != "" {
		t.Errorf("a tool without a summary has %q", m.Summary)
	}
	for _, tt := range reg.ResolveAll(&tool.Context{}, nil) {
		if tt.Name == "with_summary" && tt.Meta.Summary != "Count the words of a text." {
			t.Errorf("the resolved tool's summary is %q", tt.Meta.Summary)
		}
	}
	if _, err := ParseMetadata("metadata.json", []byte(`{"name":"x","description":"d","summary":3}`)); err == nil || !strings.Contains(err.Error(), `field "summary" must be a string`) {
		t.Errorf("a summary that is not a string: %v", err)
	}
}
