package dir

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestOutputSchema: a tool folder's output.json is the tool's output
// schema, its handler's result is the structured content (Details), and a
// result that breaks the schema is an error.
func TestOutputSchema(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	output := `{"type":"object","properties":{"words":{"type":"integer"}},"required":["words"]}`
	good := writeTool(t, parent, "good", map[string]string{
		"metadata.json": meta("good", nil), "schema.json": objectSchema, "output.json": output,
		"handler.sh": `cat >/dev/null; echo '{"success": true, "result": {"words": 3}, "summary": "3 words"}'`,
	})
	bad := writeTool(t, parent, "bad", map[string]string{
		"metadata.json": meta("bad", nil), "schema.json": objectSchema, "output.json": output,
		"handler.sh": `cat >/dev/null; echo '{"success": true, "result": {"words": "three"}}'`,
	})
	h := newHarness(t, []string{good, bad}, Options{Trusted: true})
	if h.dirTools[0].Output == nil {
		t.Fatal("output.json was not loaded")
	}
	msg := h.call(context.Background(), "good", `{"text":"a b c"}`)
	if b, _ := json.Marshal(msg.Details); msg.IsError || string(b) != `{"words":3}` {
		t.Errorf("good: isError %v, details %s, text %q", msg.IsError, b, text(msg))
	}
	msg = h.call(context.Background(), "bad", `{"text":"a b c"}`)
	if !msg.IsError || !strings.Contains(text(msg), "does not fit its output schema") {
		t.Errorf("bad: a result that breaks output.json was taken: %v %q", msg.IsError, text(msg))
	}
}

// TestOutputSchemaErrors: an output.json that is not an object schema is
// a load error naming the file.
func TestOutputSchemaErrors(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	for name, c := range map[string]struct{ output, want string }{
		"array":      {`[]`, "the output schema must be a JSON object"},
		"not object": {`{"type":"string"}`, "output.json: the output schema must describe an object"},
		"bad schema": {`{"type":"object","properties":{"a":{"type":"strung"}}}`, "output.json: the schema does not compile"},
	} {
		folder := writeTool(t, parent, strings.ReplaceAll(name, " ", "_"), map[string]string{
			"metadata.json": meta("x", nil), "schema.json": objectSchema, "output.json": c.output, "handler.sh": "",
		})
		if _, err := Load(folder, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}
