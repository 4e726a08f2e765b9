package tool_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/tool"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
		want string // part of the error
	}{
		{"read", true, ""},
		{"web_fetch", true, ""},
		{"mcp-server__tool", true, ""},
		{"A1_b-2", true, ""},
		{strings.Repeat("a", 64), true, ""},
		{"", false, "empty"},
		{strings.Repeat("a", 65), false, "65 characters"},
		{"functions.read", false, `'.' at byte 9`},
		{"with space", false, `' ' at byte 4`},
		{"tools/exec", false, `'/'`},
		{"naïve", false, "byte 2"},
	} {
		err := tool.ValidateName(tc.name)
		if tc.ok != (err == nil) {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateName(%q) = %q, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func noop(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
	return tool.Text("ok"), nil
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		t    tool.Tool
		want string
	}{
		{tool.Tool{Name: "ok", Execute: noop}, ""},
		{tool.Tool{Name: "ok", Execute: noop, Parameters: &jsonschema.Schema{Type: "object"}}, ""},
		{tool.Tool{Name: "ok", Execute: noop, Parameters: &jsonschema.Schema{Types: []string{"object"}}}, ""},
		{tool.Tool{Name: "bad name", Execute: noop}, "bad name"},
		{tool.Tool{Name: "noexec"}, "no Execute"},
		{tool.Tool{Name: "arr", Execute: noop, Parameters: &jsonschema.Schema{Type: "array"}}, `not "array"`},
		{tool.Tool{Name: "multi", Execute: noop, Parameters: &jsonschema.Schema{Types: []string{"object", "null"}}}, `not "object|null"`},
	} {
		err := tc.t.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%s) = %v, want %q", tc.t.Name, err, tc.want)
		}
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"web_fetch": "Web Fetch", "read": "Read", "apply-patch": "Apply Patch", "a__b": "A B"} {
		if got := tool.LabelFromName(in); got != want {
			t.Errorf("LabelFromName(%q) = %q, want %q", in, got, want)
		}
	}
	tt := tool.Tool{Name: "x_y", Label: "Custom"}
	if tt.DisplayLabel() != "Custom" {
		t.Error(tt.DisplayLabel())
	}
}

func TestMetaDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   tool.Meta
		want tool.Meta
	}{
		{tool.Meta{ID: "read", ReadOnly: true, Destructive: true}, tool.Meta{ID: "read", Label: "Read", ReadOnly: true, Idempotent: true, Risk: tool.RiskLow, Source: tool.SourcePlugin}},
		{tool.Meta{ID: "write"}, tool.Meta{ID: "write", Label: "Write", Risk: tool.RiskMedium, Source: tool.SourcePlugin}},
		{tool.Meta{ID: "sudo", Capabilities: tool.Capabilities{Elevated: true}}, tool.Meta{ID: "sudo", Label: "Sudo", Risk: tool.RiskHigh, Capabilities: tool.Capabilities{Elevated: true}, Source: tool.SourcePlugin}},
		{tool.Meta{ID: "x", Label: "L", Risk: tool.RiskLow, Source: tool.SourceCore}, tool.Meta{ID: "x", Label: "L", Risk: tool.RiskLow, Source: tool.SourceCore}},
	} {
		got := tc.in.WithDefaults()
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(tc.want)
		if string(gj) != string(wj) {
			t.Errorf("WithDefaults(%+v)\n got %s\nwant %s", tc.in, gj, wj)
		}
	}
}

func TestMetaJSON(t *testing.T) {
	t.Parallel()
	m := tool.Meta{
		ID: "exec", Label: "Exec", Section: "runtime", Profiles: []string{"coding"}, Risk: tool.RiskHigh,
		Timeout: 300 * time.Second, EstimatedTime: 1500 * time.Millisecond, Capabilities: tool.Capabilities{Background: true, PTY: true},
		Source: tool.SourceCore, RequiresConfirmation: true,
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"exec","label":"Exec","section":"runtime","profiles":["coding"],"risk":"high","requiresConfirmation":true,"timeout":"5m0s","estimatedTime":"1.5s","capabilities":{"background":true,"pty":true},"source":"core"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back tool.Meta
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b2) != want {
		t.Errorf("round trip: %s", b2)
	}
	for _, bad := range []string{`{"risk":"extreme"}`, `{"timeout":"soon"}`, `{"estimatedTime":"5"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
}

func TestRiskText(t *testing.T) {
	t.Parallel()
	for _, r := range []tool.Risk{tool.RiskLow, tool.RiskMedium, tool.RiskHigh} {
		back, err := tool.ParseRisk(r.String())
		if err != nil || back != r {
			t.Errorf("%v: %v %v", r, back, err)
		}
	}
	if _, err := tool.ParseRisk(""); err == nil {
		t.Error("empty risk parsed")
	}
	if tool.Risk(9).String() != "risk(9)" {
		t.Error(tool.Risk(9).String())
	}
}

func TestInProfile(t *testing.T) {
	t.Parallel()
	m := tool.Meta{Profiles: []string{"coding"}}
	for p, want := range map[string]bool{"": true, "full": true, "coding": true, "minimal": false} {
		if m.InProfile(p) != want {
			t.Errorf("InProfile(%q) != %v", p, want)
		}
	}
}

func TestContentJSON(t *testing.T) {
	t.Parallel()
	res := tool.Image("a chart", []byte{0x89, 'P', 'N', 'G'}, "image/png")
	res.Content = append(res.Content, tool.Content{Type: tool.TextContent}, tool.Content{Type: tool.AudioContent, Data: "UklGRg==", MIMEType: "audio/wav"})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":"a chart"},{"type":"image","data":"iVBORw==","mimeType":"image/png"},{"type":"text","text":""},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}],"isError":false}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back tool.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if data, _ := base64.StdEncoding.DecodeString(back.Content[1].Data); string(data) != "\x89PNG" || back.Content[1].MIMEType != "image/png" {
		t.Errorf("image did not round-trip: %+v", back.Content[1])
	}
	if back.Content[3] != res.Content[3] {
		t.Errorf("audio did not round-trip: %+v", back.Content[3])
	}
	if _, err := json.Marshal(tool.Content{Type: "video"}); err == nil {
		t.Error("unknown content type encoded")
	}
	if err := json.Unmarshal([]byte(`{"type":"video"}`), &back.Content[0]); err == nil {
		t.Error("unknown content type decoded")
	}
}

func TestResultHelpers(t *testing.T) {
	t.Parallel()
	if r := tool.Textf("%d files", 3); r.Content[0].Text != "3 files" || r.IsError {
		t.Errorf("Textf: %+v", r)
	}
	if r := tool.Errorf("no %s", "way"); r.Content[0].Text != "no way" || !r.IsError {
		t.Errorf("Errorf: %+v", r)
	}
	payload := map[string]any{"b": 1, "a": []int{1}}
	r, err := tool.JSON(payload)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content[0].Text != "{\n  \"a\": [\n    1\n  ],\n  \"b\": 1\n}" || r.Details == nil {
		t.Errorf("JSON: %q %v", r.Content[0].Text, r.Details)
	}
	if _, err := tool.JSON(make(chan int)); err == nil {
		t.Error("JSON of a channel did not fail")
	}
	env := tool.Envelope{Status: "blocked", Tool: "exec", Reason: "denied by policy"}.Result()
	if env.Content[0].Text != `{"status":"blocked","tool":"exec","reason":"denied by policy"}` || !env.IsError {
		t.Errorf("envelope: %+v", env)
	}
	wrapped := fmt.Errorf("reading: %w", tool.InputErrorf("file %q does not exist", "a.go"))
	if !tool.IsInputError(wrapped) || tool.IsInputError(errors.New("x")) {
		t.Error("IsInputError")
	}
	if wrapped.Error() != `reading: file "a.go" does not exist` {
		t.Error(wrapped)
	}
}

func TestConfigDecode(t *testing.T) {
	t.Parallel()
	c := tool.Config{"exec": map[string]any{"timeout": 30, "allow": []any{"A_KEY"}}}
	var cfg struct {
		Timeout int      `json:"timeout"`
		Allow   []string `json:"allow"`
		Keep    string   `json:"keep"`
	}
	cfg.Keep = "default"
	if err := c.Decode("exec", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout != 30 || len(cfg.Allow) != 1 || cfg.Keep != "default" {
		t.Errorf("%+v", cfg)
	}
	if err := c.Decode("missing", &cfg); err != nil {
		t.Error(err)
	}
	if err := (tool.Config{"exec": map[string]any{"timeout": "soon"}}).Decode("exec", &cfg); err == nil || !strings.Contains(err.Error(), `config "exec"`) {
		t.Errorf("wrong type: %v", err)
	}
}

// TestFactsSayHowACallWouldRun: the facts a person decides on come in
// their order, each environment variable on its own sorted line, the
// script's hash among them, and nothing that is not set.
func TestFactsSayHowACallWouldRun(t *testing.T) {
	e := tool.Effects{Summary: "run make test", Command: "make test", Env: map[string]string{"B": "2", "A": "1"},
		Programs: []tool.Program{{Name: "make", Path: "/usr/bin/make"}}, ScriptHash: "sha256:ab", Diff: "--- x"}
	var got []string
	for _, f := range e.Facts() {
		got = append(got, f.Label+"="+f.Value)
	}
	want := []string{"effect=run make test", "command=make test", "env=A=1", "env=B=2", "programs=make (/usr/bin/make)", "script=sha256:ab"}
	if !slices.Equal(got, want) {
		t.Errorf("facts:\n got %q\nwant %q", got, want)
	}
	if f := (tool.Effects{}).Facts(); len(f) != 0 {
		t.Errorf("no effects, facts %v", f)
	}
}
