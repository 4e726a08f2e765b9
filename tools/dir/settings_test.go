package dir

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// notesSettings is the settings schema of the tools below: a closed object
// (no additionalProperties written) with a nested object.
var notesSettings = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"baseUrl":  map[string]any{"type": "string"},
		"maxItems": map[string]any{"type": "integer", "minimum": 1},
		"auth":     map[string]any{"type": "object", "properties": map[string]any{"token": map[string]any{"type": "string"}}},
	},
}

// TestHandlerGetsItsSettings: a tool whose metadata declares settings gets
// the configuration's in every request (as given, checked against the
// declaration), {} when there are none; a tool that declares none gets no
// "settings"; settings that do not match fail every call with why and the
// handler is not run.
func TestHandlerGetsItsSettings(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	echo := `printf '{"success":true,"result":%s}' "$req"`
	notes := shTool(t, parent, "notes", echo, map[string]any{"settings": notesSettings})
	plain := shTool(t, parent, "plain", echo, nil)
	settings := func(h *harness, name string) (any, bool) {
		t.Helper()
		msg := h.call(context.Background(), name, `{"text":"x"}`)
		if msg.IsError {
			t.Fatalf("%s: %s", name, text(msg))
		}
		var req map[string]any
		if err := json.Unmarshal([]byte(text(msg)), &req); err != nil {
			t.Fatalf("%s: %v: %s", name, err, text(msg))
		}
		s, ok := req["settings"]
		return s, ok
	}

	given := tool.Config{"notes": map[string]any{"baseUrl": "http://127.0.0.1:9/api", "maxItems": 3, "auth": map[string]any{"token": "t0"}}, "plain": map[string]any{"x": 1}}
	h := newHarness(t, []string{notes, plain}, Options{Trusted: true, Settings: given})
	if s, _ := settings(h, "notes"); mustJSON(s) != `{"auth":{"token":"t0"},"baseUrl":"http://127.0.0.1:9/api","maxItems":3}` {
		t.Errorf("notes got settings %s", mustJSON(s))
	}
	if s, ok := settings(h, "plain"); ok {
		t.Errorf("plain, which declares no settings, got %s", mustJSON(s))
	}
	if s, _ := settings(newHarness(t, []string{notes}, Options{Trusted: true}), "notes"); mustJSON(s) != `{}` {
		t.Errorf("notes without settings got %s", mustJSON(s))
	}

	for _, bad := range []map[string]any{
		{"maxItems": 0},
		{"baseUrll": "http://x"},
		{"auth": map[string]any{"tokn": "t0"}},
	} {
		h := newHarness(t, []string{notes}, Options{Trusted: true, Settings: tool.Config{"notes": bad}})
		msg := h.call(context.Background(), "notes", `{"text":"x"}`)
		if !msg.IsError || !strings.Contains(text(msg), "the settings of notes (tools.notes in toolbelt.yaml) do not match what its metadata.json declares") {
			t.Errorf("settings %v: %s", bad, text(msg))
		}
	}
}

// TestSettingsDeclarations: metadata.json's "settings" is the JSON Schema
// of an object that compiles; an untrusted tool may not declare settings
// (they would hand the configuration's values to code the agent wrote).
func TestSettingsDeclarations(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	for _, c := range []struct {
		settings any
		want     string
	}{
		{"baseUrl", `settings must be the JSON Schema of an object`},
		{map[string]any{"type": "string"}, `settings must be the JSON Schema of an object`},
		{map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": "one"}}}, `field "settings.properties.minimum" must be a number, not string`},
		{map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"$ref": "#/$defs/missing"}}}, `settings: the schema does not compile`},
	} {
		folder := shTool(t, parent, "bad", "true", map[string]any{"settings": c.settings})
		if _, err := Load(folder, Options{Trusted: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("settings %v: %v, want %q", c.settings, err, c.want)
		}
	}
	folder := shTool(t, parent, "mine", "true", map[string]any{"settings": notesSettings})
	if _, err := Load(folder, Options{}); err == nil || !strings.Contains(err.Error(), `"settings" is refused for a tool from a folder the agent can write`) {
		t.Errorf("untrusted: %v", err)
	}
}
