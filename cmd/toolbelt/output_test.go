package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestWriteJSONUnescapesHTML: a schema's own MarshalJSON escapes &, < and >;
// writeJSON shows them as themselves and leaves every other escape alone.
func TestWriteJSONUnescapesHTML(t *testing.T) {
	t.Parallel()
	v := map[string]any{
		"schema": &jsonschema.Schema{Type: "string", Description: `go test 2>&1 | tail <x>`},
		"kept":   `a literal \u0026 stays, "quotes" and a tab	too`,
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	want := `{
  "kept": "a literal \\u0026 stays, \"quotes\" and a tab\ttoo",
  "schema": {
    "type": "string",
    "description": "go test 2>&1 | tail <x>"
  }
}
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["kept"] != v["kept"] {
		t.Errorf("the text does not read back: %v %q", err, back["kept"])
	}
}
