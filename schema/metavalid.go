package schema

import (
	"encoding/json"
	"slices"
	"strconv"
)

// metaValid reports whether the JSON Schema 2020-12 meta-schema certainly
// accepts doc, a schema as jsonschema.UnmarshalJSON decodes it (numbers as
// json.Number), by a walk of the keywords tool schemas are made of. False
// means "not known": a keyword outside that set, a "$schema", "$ref" or
// "pattern" (whose check needs the meta-schema's formats), a value of a
// type it does not expect. The compiler then checks doc against the
// meta-schema, as it always did.
//
// It spares a process the meta-schema's compile (the draft's schema and
// its seven vocabularies) at its first call of a tool: 4.3% of the CPU of
// a whole `toolbelt call memory_search` process (issue 36).
// TestMetaValidOnlyWhenTheMetaSchemaAccepts and FuzzMetaValid hold it to
// the meta-schema.
func metaValid(doc any) bool {
	switch d := doc.(type) {
	case bool:
		return true
	case map[string]any:
		for k, v := range d {
			if !metaValidKeyword(k, v) {
				return false
			}
		}
		return true
	}
	return false
}

// simpleTypes are the names "type" takes.
var simpleTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

func metaValidKeyword(k string, v any) bool {
	switch k {
	case "title", "description", "$comment", "format":
		_, ok := v.(string)
		return ok
	case "default", "const":
		return true
	case "examples", "enum":
		_, ok := v.([]any)
		return ok
	case "deprecated", "readOnly", "writeOnly", "uniqueItems":
		_, ok := v.(bool)
		return ok
	case "type":
		if s, ok := v.(string); ok {
			return slices.Contains(simpleTypes, s)
		}
		a, ok := v.([]any)
		return ok && len(a) > 0 && uniqueStrings(a, simpleTypes)
	case "required":
		a, ok := v.([]any)
		return ok && uniqueStrings(a, nil)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		_, ok := v.(json.Number)
		return ok
	case "multipleOf":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f > 0
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		n, ok := v.(json.Number)
		return ok && digits(string(n))
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, s := range m {
			if !metaValid(s) {
				return false
			}
		}
		return true
	case "additionalProperties", "items", "not":
		return metaValid(v)
	case "allOf", "anyOf", "oneOf":
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return false
		}
		for _, s := range a {
			if !metaValid(s) {
				return false
			}
		}
		return true
	}
	return false
}

// uniqueStrings reports whether a holds strings only, no two the same, each
// among allowed when allowed is not nil.
func uniqueStrings(a []any, allowed []string) bool {
	for i, x := range a {
		s, ok := x.(string)
		if !ok || allowed != nil && !slices.Contains(allowed, s) {
			return false
		}
		for _, y := range a[:i] {
			if y == s {
				return false
			}
		}
	}
	return true
}

// digits reports whether s is a non-empty run of decimal digits: an
// integer of at least zero, as "nonNegativeInteger" requires.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
