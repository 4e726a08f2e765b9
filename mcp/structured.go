package mcp

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// outputOf returns the output schema of the listed tool of that name, or
// nil when it has none.
func (s *Server) outputOf(name string) *jsonschema.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed[name].output
}

// structured returns a successful result's details as the structuredContent
// of a tool with the output schema output. The pipeline checked them
// against the schema (invoke.CheckOutput) before it added its notes (what it
// did to the call: arguments normalized, text truncated) as more keys; a
// schema that forbids properties it does not declare gets the details
// without them, so what the client reads fits the schema it was given.
func structured(output *jsonschema.Schema, details any) any {
	if !isFalse(output.AdditionalProperties) {
		return details
	}
	b, err := json.Marshal(details)
	if err != nil {
		return details
	}
	var obj map[string]any
	if json.Unmarshal(b, &obj) != nil || obj == nil {
		return details
	}
	for k := range obj {
		if _, ok := output.Properties[k]; !ok {
			delete(obj, k)
		}
	}
	return obj
}

// isFalse reports whether a schema is the schema false, as jsonschema-go
// writes additionalProperties: false.
func isFalse(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}
