package schema

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// The checkers below say what each provider accepts, written from the
// providers' documented limits and the errors their APIs return, and kept
// apart from the compiler's own dialect tables on purpose: a compiled schema
// must pass the checker of its dialect.

// providerRules is one provider's documented limits.
type providerRules struct {
	// keywords the provider accepts on a schema node; nil accepts any.
	keywords []string
	// banned keywords it refuses anywhere, even with keywords nil.
	banned []string
	// formats accepted, by type; nil accepts any format.
	formats map[string][]string
	// needsItems: "array schema missing items" (OpenAI), or a missing
	// field (Gemini).
	needsItems bool
	// needsType: "schema didn't specify the schema type field" (Gemini).
	needsType bool
	// stringEnums: enums are of strings, on type string (Gemini).
	stringEnums bool
	// noTypeArrays: "type" is one type name.
	noTypeArrays bool
	// requiredDeclared: required names only declared properties.
	requiredDeclared bool
	// rootProperties: "object schema missing properties" (OpenAI).
	rootProperties bool
	// strict: every object closed and fully required; every node typed.
	strict bool
	// localRefs: references are local and point at something.
	localRefs bool
}

var providers = map[string]providerRules{
	// platform.openai.com/docs/guides/function-calling: parameters are a
	// JSON Schema object; the root may not be anyOf/oneOf/allOf/enum/not;
	// arrays need items; an object root needs properties.
	"openai": {needsItems: true, rootProperties: true, localRefs: true},
	// platform.openai.com/docs/guides/structured-outputs, "Supported
	// schemas": the listed keywords and string formats only; every object
	// has additionalProperties: false and lists every property in
	// required; nullable through a type array or anyOf with null.
	"openai-strict": {
		keywords: []string{"type", "properties", "required", "additionalProperties", "items", "anyOf",
			"enum", "const", "$ref", "$defs", "definitions", "description", "title",
			"pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
			"minItems", "maxItems"},
		formats:        map[string][]string{"string": {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}},
		needsItems:     true,
		rootProperties: true, requiredDeclared: true, strict: true, localRefs: true,
	},
	// docs.anthropic.com tool use: input_schema is a JSON Schema object;
	// no oneOf, allOf or anyOf at the top level.
	"anthropic": {localRefs: true},
	// ai.google.dev Schema (OpenAPI 3.0 subset): these fields only, with
	// the ones the API answers HTTP 400 to taken out (numeric, length and
	// count bounds, pattern, references, additionalProperties…).
	"gemini": {
		keywords: []string{"type", "format", "title", "description", "nullable", "enum", "properties",
			"required", "items", "anyOf", "propertyOrdering", "default", "example"},
		formats:     map[string][]string{"string": {"date-time", "enum"}, "number": {"float", "double"}, "integer": {"int32", "int64"}},
		needsItems:  true,
		needsType:   true,
		stringEnums: true, noTypeArrays: true, requiredDeclared: true,
	},
	// ai.google.dev structured output, JSON Schema support: the keywords
	// parametersJsonSchema takes.
	"gemini-json": {
		keywords: []string{"$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum",
			"items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf",
			"properties", "additionalProperties", "required", "propertyOrdering"},
		needsItems: true, noTypeArrays: true, requiredDeclared: true, localRefs: true,
	},
	// docs.x.ai function calling: OpenAI's format, without length and
	// item-count keywords.
	"xai": {banned: []string{"minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains"},
		needsItems: true, rootProperties: true, localRefs: true},
}

// checkProvider returns what the provider would reject in a tool's
// parameter schema, one line per problem; nil when it would accept it.
func checkProvider(provider string, doc any) []string {
	rules, ok := providers[provider]
	if !ok {
		rules = providers["openai"] // compat dialects are OpenAI's, minus keywords
		if kws, ok := strings.CutPrefix(provider, "compat:"); ok {
			rules.banned = strings.Split(kws, ",")
		}
	}
	ck := &providerCheck{rules: rules, root: doc}
	root, ok := doc.(map[string]any)
	if !ok {
		return []string{"(root): not an object schema"}
	}
	if root["type"] != "object" {
		ck.fail("", `root "type" is not "object"`)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "not"} {
		if _, ok := root[k]; ok {
			ck.fail("", "%s at the root", k)
		}
	}
	if _, ok := root["properties"].(map[string]any); !ok && rules.rootProperties {
		ck.fail("", "object schema missing properties")
	}
	ck.node(root, "", 0)
	sort.Strings(ck.problems)
	return ck.problems
}

type providerCheck struct {
	rules    providerRules
	root     any
	problems []string
}

func (ck *providerCheck) fail(path, format string, args ...any) {
	if path == "" {
		path = "(root)"
	}
	ck.problems = append(ck.problems, path+": "+fmt.Sprintf(format, args...))
}

func (ck *providerCheck) node(v any, path string, depth int) {
	if depth > 200 {
		ck.fail(path, "nested too deeply for the checker")
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool && ck.rules.keywords == nil && !ck.rules.needsType {
			return
		}
		ck.fail(path, "schema is a %T, not an object", v)
		return
	}
	r := ck.rules
	for k := range m {
		if r.keywords != nil && !slices.Contains(r.keywords, k) || slices.Contains(r.banned, k) {
			ck.fail(path, "keyword %q not accepted", k)
		}
	}
	types := []string{}
	switch t := m["type"].(type) {
	case string:
		types = append(types, t)
	case []any:
		if r.noTypeArrays {
			ck.fail(path, "type array %v", t)
		}
		for _, e := range t {
			s, _ := e.(string)
			types = append(types, s)
		}
	case nil:
		_, union := m["anyOf"]
		_, ref := m["$ref"]
		if r.needsType && !union && !ref {
			ck.fail(path, "schema didn't specify the schema type field")
		}
		_, enum := m["enum"]
		_, cst := m["const"]
		if r.strict && !union && !ref && !enum && !cst {
			ck.fail(path, "strict: a schema without a type")
		}
	default:
		ck.fail(path, "type is %T", t)
	}
	for _, t := range types {
		switch t {
		case "string", "number", "integer", "boolean", "array", "object":
		case "null":
			if r.needsType { // the OpenAPI subset has no null type
				ck.fail(path, `type "null"`)
			}
		default:
			ck.fail(path, "unknown type %q", t)
		}
	}
	if f, ok := m["format"]; ok && r.formats != nil {
		ok := false
		for _, t := range types {
			if slices.Contains(r.formats[t], fmt.Sprint(f)) {
				ok = true
			}
		}
		if !ok {
			ck.fail(path, "format %v not accepted on %v", f, types)
		}
	}
	if e, ok := m["enum"]; ok {
		list, isList := e.([]any)
		if !isList || len(list) == 0 {
			ck.fail(path, "enum is not a non-empty array")
		}
		if r.stringEnums {
			if !slices.Equal(types, []string{"string"}) {
				ck.fail(path, "enum on type %v, not string", types)
			}
			for _, v := range list {
				if _, ok := v.(string); !ok {
					ck.fail(path, "enum value %v is not a string", v)
				}
			}
		}
	}
	isArray := slices.Contains(types, "array")
	if _, ok := m["items"]; !ok && isArray && r.needsItems {
		if _, ok := m["prefixItems"]; !ok {
			ck.fail(path, "array schema missing items")
		}
	}
	props, hasProps := m["properties"]
	propMap, _ := props.(map[string]any)
	if hasProps && propMap == nil {
		ck.fail(path, "properties is not an object")
	}
	if req, ok := m["required"]; ok {
		list, _ := req.([]any)
		for _, name := range list {
			s, ok := name.(string)
			if !ok {
				ck.fail(path, "required holds %v", name)
				continue
			}
			if _, declared := propMap[s]; r.requiredDeclared && !declared {
				ck.fail(path, "required names undeclared property %q", s)
			}
		}
	}
	if r.strict && (slices.Contains(types, "object") || hasProps) {
		if m["additionalProperties"] != false {
			ck.fail(path, "strict: additionalProperties is not false")
		}
		list, _ := m["required"].([]any)
		for name := range propMap {
			if !slices.Contains(list, any(name)) {
				ck.fail(path, "strict: property %q not in required", name)
			}
		}
	}
	if ref, ok := m["$ref"]; ok && r.localRefs {
		s, _ := ref.(string)
		if !strings.HasPrefix(s, "#") || ck.pointerTarget(s) == nil {
			ck.fail(path, "reference %v does not resolve inside the schema", ref)
		}
	}
	// Walk every place a schema can be.
	for _, name := range sortedKeys(propMap) {
		ck.node(propMap[name], child(child(path, "properties"), name), depth+1)
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "additionalItems"} {
		switch x := m[k].(type) {
		case map[string]any:
			ck.node(x, child(path, k), depth+1)
		case []any:
			for i, s := range x {
				ck.node(s, index(child(path, k), i), depth+1)
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		list, _ := m[k].([]any)
		for i, s := range list {
			ck.node(s, index(child(path, k), i), depth+1)
		}
	}
	for _, k := range []string{"$defs", "definitions", "patternProperties", "dependentSchemas"} {
		defs, _ := m[k].(map[string]any)
		for _, name := range sortedKeys(defs) {
			ck.node(defs[name], child(child(path, k), name), depth+1)
		}
	}
}

// pointerTarget resolves a local reference in the checked document, on its
// own, without the compiler's resolver.
func (ck *providerCheck) pointerTarget(ref string) any {
	cur := ck.root
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil
	}
	if frag == "" {
		return cur
	}
	if !strings.HasPrefix(frag, "/") {
		return nil // an anchor, not a pointer
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}
