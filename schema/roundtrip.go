package schema

import (
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// An imported tool's schema arrives as generic JSON, and was converted to
// jsonschema-go's type (ToSchema) to be registered, then converted back to
// generic JSON (FromSchema) to be compiled for a dialect when the tool was
// listed: for a thousand imported tools the two were a quarter of the
// start. Most schemas come back from the two exactly as they went in, and
// that can be told from the generic form alone (RoundTripForm): such a
// schema is listed from the form it came in, and converted to the type
// only when a call or the schema check needs it (tool.LazyParameters).

// RoundTripForm returns FromSchema(ToSchema(v)) for a v whose only
// differences from it are the schemas the type writes as booleans: {} as
// true, {"not": true} (or {"not": {}}) as false. The form is v itself when
// nothing differs, or a copy of the objects and lists on the way to what
// does (the rest shared with v); v is not changed. ok is false when v
// would come back changed in any other way, or is beyond what it
// follows. ToSchema of the form is ToSchema of v.
func RoundTripForm(v any) (any, bool) {
	return schemaForm(v, 0)
}

// changed reports whether RoundTripForm gave a copy rather than v.
func changed(form, v any) bool {
	switch f := form.(type) {
	case map[string]any:
		m, ok := v.(map[string]any)
		return !ok || reflect.ValueOf(f).UnsafePointer() != reflect.ValueOf(m).UnsafePointer()
	case bool:
		b, ok := v.(bool)
		return !ok || b != f
	}
	return true
}

// maxRoundTripDepth bounds the nesting RoundTripForm follows.
const maxRoundTripDepth = 200

// schemaForm is RoundTripForm for a schema depth levels down.
func schemaForm(v any, depth int) (any, bool) {
	switch x := v.(type) {
	case bool:
		return x, true // true is {} and false {"not": {}}, written back as booleans
	case map[string]any:
		if depth >= maxRoundTripDepth {
			return nil, false
		}
		return nodeForm(x, depth+1)
	}
	return nil, false
}

// nodeForm is RoundTripForm for an object schema.
func nodeForm(m map[string]any, depth int) (any, bool) {
	if len(m) == 0 {
		return true, true // written back as true
	}
	if _, both := m["definitions"]; both {
		if _, ok := m["$defs"]; ok {
			return nil, false
		}
	}
	var out map[string]any // m's copy, once a member's form differs
	set := func(k string, v any) {
		if out == nil {
			out = maps.Clone(m)
		}
		out[k] = v
	}
	for k, v := range m {
		var ok bool
		switch k {
		case "type":
			switch t := v.(type) {
			case string:
				ok = t != ""
			case []any:
				ok = len(t) > 0 && stringsOnly(t)
			}
		case "title", "description", "$ref", "$id", "$schema", "$comment", "$anchor",
			"$dynamicAnchor", "$dynamicRef", "format", "pattern", "contentEncoding", "contentMediaType":
			s, isString := v.(string)
			ok = isString && s != ""
		case "items", "additionalItems", "contains", "unevaluatedItems", "additionalProperties",
			"propertyNames", "unevaluatedProperties", "not", "if", "then", "else", "contentSchema":
			var form any
			if form, ok = schemaForm(v, depth); ok && changed(form, v) {
				set(k, form)
			}
		case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
			subs, isMap := v.(map[string]any)
			ok = isMap && (len(subs) > 0 || k == "properties")
			var forms map[string]any
			for name, sub := range subs {
				if !ok {
					break
				}
				var form any
				if form, ok = schemaForm(sub, depth); ok && changed(form, sub) {
					if forms == nil {
						forms = maps.Clone(subs)
					}
					forms[name] = form
				}
			}
			if ok && forms != nil {
				set(k, forms)
			}
		case "prefixItems", "allOf", "anyOf", "oneOf":
			list, isList := v.([]any)
			ok = isList && len(list) > 0
			var forms []any
			for i, sub := range list {
				if !ok {
					break
				}
				var form any
				if form, ok = schemaForm(sub, depth); ok && changed(form, sub) {
					if forms == nil {
						forms = slices.Clone(list)
					}
					forms[i] = form
				}
			}
			if ok && forms != nil {
				set(k, forms)
			}
		case "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			ok = plainFloat(v)
		case "minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains",
			"minProperties", "maxProperties":
			n, isNumber := v.(json.Number)
			i, err := strconv.Atoi(string(n))
			ok = isNumber && err == nil && strconv.Itoa(i) == string(n)
		case "deprecated", "readOnly", "writeOnly", "uniqueItems":
			ok = v == true
		case "required":
			list, isList := v.([]any)
			ok = isList && len(list) > 0 && stringsOnly(list)
		case "dependentRequired":
			deps, isMap := v.(map[string]any)
			ok = isMap && len(deps) > 0
			for _, d := range deps {
				list, isList := d.([]any)
				if ok = ok && isList && len(list) > 0 && stringsOnly(list); !ok {
					break
				}
			}
		case "enum", "examples":
			list, isList := v.([]any)
			ok = isList && len(list) > 0 && valueRoundTrips(list, depth)
		case "const":
			ok = v != nil && valueRoundTrips(v, depth)
		case "default":
			ok = valueRoundTrips(v, depth)
		default:
			// Keywords jsonschema-go has a field for that are not followed
			// here (dependencies, $vocabulary) are not kept as written;
			// other keys go to Extra and come back as they are.
			ok = !schemaFieldNames[k] && utf8.ValidString(k) && valueRoundTrips(v, depth)
		}
		if !ok {
			return nil, false
		}
	}
	if out == nil {
		out = m
	}
	if len(out) == 1 && out["not"] == true {
		return false, true // written back as false
	}
	return out, true
}

// stringsOnly reports whether every element of list is a string.
func stringsOnly(list []any) bool {
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// valueRoundTrips reports whether a JSON value comes back unchanged: its
// numbers written as FromSchema writes a float64, its strings and keys
// valid UTF-8 (the encoder would replace what is not).
func valueRoundTrips(v any, depth int) bool {
	if depth > maxRoundTripDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(x)
	case json.Number:
		return plainFloat(x)
	case []any:
		for _, e := range x {
			if !valueRoundTrips(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !valueRoundTrips(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// plainFloat reports whether v is a json.Number written as FromSchema
// writes the float64 it stands for.
func plainFloat(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	if plainInteger(string(n)) {
		return true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && !math.IsInf(f, 0) && floatNumber(f) == n
}

// plainInteger reports whether s is 0 or an integer of at most 15 digits
// without a leading zero: a float64 holds it exactly, and FromSchema
// writes it as it is.
func plainInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "0" {
		return true
	}
	if len(s) == 0 || len(s) > 15 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
