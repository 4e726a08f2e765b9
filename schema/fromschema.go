package schema

import (
	"encoding/json"
	"math"
	"strconv"

	gschema "github.com/google/jsonschema-go/jsonschema"
)

// fromSchema builds the generic form of s directly, field by field, as
// Decode(json.Marshal(s)) would give it; ok is false when s is one the
// encoder would refuse or treat specially beyond this (both Type and Types,
// an Extra key that is a keyword, …), for the caller to take the round
// trip. The round trip through jsonschema-go's reflective encoder was the
// largest cost of building a server's tool list.
func fromSchema(s *gschema.Schema) (v any, ok bool) {
	if s == nil {
		return nil, true
	}
	if (s.Type != "" && s.Types != nil) || (s.Defs != nil && s.Definitions != nil) || (s.Items != nil && s.ItemsArray != nil) {
		return nil, false
	}
	for k := range s.DependencySchemas {
		if _, dup := s.DependencyStrings[k]; dup {
			return nil, false
		}
	}
	if len(s.PropertyOrder) > 1 {
		seen := make(map[string]bool, len(s.PropertyOrder))
		for _, p := range s.PropertyOrder {
			if seen[p] {
				return nil, false
			}
			seen[p] = true
		}
	}
	m := make(map[string]any, 4+len(s.Extra))
	ok = true
	str := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	flag := func(k string, v bool) {
		if v {
			m[k] = true
		}
	}
	num := func(k string, v *float64) {
		if v != nil {
			m[k] = floatNumber(*v)
		}
	}
	count := func(k string, v *int) {
		if v != nil {
			m[k] = json.Number(strconv.Itoa(*v))
		}
	}
	sub := func(k string, v *gschema.Schema) {
		if v != nil && ok {
			m[k], ok = fromSchema(v)
		}
	}
	list := func(k string, v []*gschema.Schema) {
		if len(v) > 0 && ok {
			m[k], ok = convertAll(v, fromSchema)
		}
	}
	subs := func(k string, v map[string]*gschema.Schema, always bool) {
		if (len(v) > 0 || (always && v != nil)) && ok {
			m[k], ok = convertValues(v, fromSchema)
		}
	}
	values := func(k string, v []any) {
		if len(v) > 0 && ok {
			m[k], ok = generic(v)
		}
	}

	switch {
	case s.Type != "":
		m["type"] = s.Type
	case s.Types != nil:
		ts := make([]any, len(s.Types))
		for i, t := range s.Types {
			ts[i] = t
		}
		m["type"] = ts
	}
	subs("properties", s.Properties, true)
	if len(s.DependencySchemas)+len(s.DependencyStrings) > 0 {
		dep := make(map[string]any, len(s.DependencySchemas)+len(s.DependencyStrings))
		for k, v := range s.DependencySchemas {
			if ok {
				dep[k], ok = fromSchema(v)
			}
		}
		for k, v := range s.DependencyStrings {
			dep[k] = stringList(v)
		}
		m["dependencies"] = dep
	}
	switch {
	case s.Items != nil:
		sub("items", s.Items)
	case s.ItemsArray != nil:
		if ok {
			m["items"], ok = convertAll(s.ItemsArray, fromSchema)
		}
	}
	str("$id", s.ID)
	str("$schema", s.Schema)
	str("$ref", s.Ref)
	str("$comment", s.Comment)
	subs("$defs", s.Defs, false)
	subs("definitions", s.Definitions, false)
	str("$anchor", s.Anchor)
	str("$dynamicAnchor", s.DynamicAnchor)
	str("$dynamicRef", s.DynamicRef)
	if len(s.Vocabulary) > 0 {
		voc := make(map[string]any, len(s.Vocabulary))
		for k, v := range s.Vocabulary {
			voc[k] = v
		}
		m["$vocabulary"] = voc
	}
	str("title", s.Title)
	str("description", s.Description)
	if len(s.Default) > 0 && ok {
		d, err := Decode(s.Default)
		m["default"], ok = d, err == nil
	}
	flag("deprecated", s.Deprecated)
	flag("readOnly", s.ReadOnly)
	flag("writeOnly", s.WriteOnly)
	values("examples", s.Examples)
	values("enum", s.Enum)
	if s.Const != nil && ok {
		m["const"], ok = generic(*s.Const)
	}
	num("multipleOf", s.MultipleOf)
	num("minimum", s.Minimum)
	num("maximum", s.Maximum)
	num("exclusiveMinimum", s.ExclusiveMinimum)
	num("exclusiveMaximum", s.ExclusiveMaximum)
	count("minLength", s.MinLength)
	count("maxLength", s.MaxLength)
	str("pattern", s.Pattern)
	list("prefixItems", s.PrefixItems)
	count("minItems", s.MinItems)
	count("maxItems", s.MaxItems)
	sub("additionalItems", s.AdditionalItems)
	flag("uniqueItems", s.UniqueItems)
	sub("contains", s.Contains)
	count("minContains", s.MinContains)
	count("maxContains", s.MaxContains)
	sub("unevaluatedItems", s.UnevaluatedItems)
	count("minProperties", s.MinProperties)
	count("maxProperties", s.MaxProperties)
	if len(s.Required) > 0 {
		m["required"] = stringList(s.Required)
	}
	if len(s.DependentRequired) > 0 {
		dr := make(map[string]any, len(s.DependentRequired))
		for k, v := range s.DependentRequired {
			dr[k] = stringList(v)
		}
		m["dependentRequired"] = dr
	}
	subs("patternProperties", s.PatternProperties, false)
	sub("additionalProperties", s.AdditionalProperties)
	sub("propertyNames", s.PropertyNames)
	sub("unevaluatedProperties", s.UnevaluatedProperties)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	sub("not", s.Not)
	sub("if", s.If)
	sub("then", s.Then)
	sub("else", s.Else)
	subs("dependentSchemas", s.DependentSchemas, false)
	str("contentEncoding", s.ContentEncoding)
	str("contentMediaType", s.ContentMediaType)
	sub("contentSchema", s.ContentSchema)
	str("format", s.Format)
	for k, v := range s.Extra {
		if !ok {
			break
		}
		if _, keyword := m[k]; keyword || schemaFieldNames[k] {
			return nil, false // the encoder refuses an Extra key that is a field's
		}
		m[k], ok = generic(v)
	}
	if !ok {
		return nil, false
	}
	// The encoder writes {} as true and {"not": true} as false.
	switch {
	case len(m) == 0:
		return true, true
	case len(m) == 1 && m["not"] == true:
		return false, true
	}
	return m, true
}

// schemaFieldNames are the JSON names of gschema.Schema's fields that the
// encoder reserves, also when the field is empty.
var schemaFieldNames = map[string]bool{
	"type": true, "properties": true, "dependencies": true, "items": true,
	"$id": true, "$schema": true, "$ref": true, "$comment": true, "$defs": true, "definitions": true,
	"$anchor": true, "$dynamicAnchor": true, "$dynamicRef": true, "$vocabulary": true,
	"title": true, "description": true, "default": true, "deprecated": true, "readOnly": true,
	"writeOnly": true, "examples": true, "enum": true, "const": true, "multipleOf": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "prefixItems": true, "minItems": true,
	"maxItems": true, "additionalItems": true, "uniqueItems": true, "contains": true,
	"minContains": true, "maxContains": true, "unevaluatedItems": true, "minProperties": true,
	"maxProperties": true, "required": true, "dependentRequired": true, "patternProperties": true,
	"additionalProperties": true, "propertyNames": true, "unevaluatedProperties": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"dependentSchemas": true, "contentEncoding": true, "contentMediaType": true,
	"contentSchema": true, "format": true,
}

// convertAll converts every element of in with f; ok is false when f
// refuses one.
func convertAll[T, U any](in []T, f func(T) (U, bool)) ([]U, bool) {
	out := make([]U, len(in))
	for i, e := range in {
		var ok bool
		if out[i], ok = f(e); !ok {
			return nil, false
		}
	}
	return out, true
}

// convertValues converts every value of in with f; ok is false when f
// refuses one.
func convertValues[T, U any](in map[string]T, f func(T) (U, bool)) (map[string]U, bool) {
	out := make(map[string]U, len(in))
	for k, e := range in {
		v, ok := f(e)
		if !ok {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

func stringList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// floatNumber is f as encoding/json writes a float64.
func floatNumber(f float64) json.Number {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return json.Number(b)
}

// generic returns a value in the generic form the compiler works on, as a
// JSON round trip would give it: numbers as json.Number, objects and arrays
// copied, any other type through encoding/json.
func generic(v any) (any, bool) {
	return copyJSON(v, func(v any) (any, bool) {
		switch x := v.(type) {
		case json.Number:
			return x, true
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, false
			}
			return floatNumber(x), true
		case int:
			return json.Number(strconv.Itoa(x)), true
		case int64:
			return json.Number(strconv.FormatInt(x, 10)), true
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		g, err := Decode(b)
		return g, err == nil
	})
}

// copyJSON copies a JSON value, objects and arrays included, converting
// with other every value that is not null, a string, a boolean, an object
// or an array (numbers, or values of other types); ok is false when other
// refuses one.
func copyJSON(v any, other func(any) (any, bool)) (any, bool) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, true
	case []any:
		return convertAll(x, func(e any) (any, bool) { return copyJSON(e, other) })
	case map[string]any:
		return convertValues(x, func(e any) (any, bool) { return copyJSON(e, other) })
	}
	return other(v)
}
