package schema

import (
	"encoding/json"
	"math"
	"strconv"

	gschema "github.com/google/jsonschema-go/jsonschema"
)

// ToSchema returns a schema in generic JSON form (as a JSON decoder gives
// it: objects, arrays, float64 or json.Number numbers) as jsonschema-go's
// type, exactly as json.Unmarshal of its JSON text would; keywords the type
// has no field for go to Extra. It builds the value directly when it can
// (the JSON round trip through jsonschema-go's reflective decoder was a
// third of the CPU of importing a thousand tools) and takes the round trip
// for what it cannot, which also gives the decoder's errors.
func ToSchema(v any) (*gschema.Schema, error) {
	if s, ok := toSchema(v); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var s gschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// toSchema converts v directly; ok is false for anything the decoder would
// refuse or treat in a way this does not follow (nulls where a schema
// goes, numbers out of range, …).
func toSchema(v any) (s *gschema.Schema, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return &gschema.Schema{}, true
		}
		return &gschema.Schema{Not: &gschema.Schema{}}, true
	case map[string]any:
		return objectSchema(x)
	}
	return nil, false
}

func objectSchema(m map[string]any) (*gschema.Schema, bool) {
	s := &gschema.Schema{}
	ok := true
	var extra map[string]any
	str := func(dst *string, v any) {
		switch x := v.(type) {
		case string:
			*dst = x
		case nil:
		default:
			ok = false
		}
	}
	flag := func(dst *bool, v any) {
		switch x := v.(type) {
		case bool:
			*dst = x
		case nil:
		default:
			ok = false
		}
	}
	num := func(dst **float64, v any) {
		if v == nil {
			return
		}
		f, isNum := float(v)
		if !isNum {
			ok = false
			return
		}
		*dst = &f
	}
	count := func(dst **int, v any) {
		if v == nil {
			return
		}
		f, isNum := float(v)
		if !isNum || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
			ok = false
			return
		}
		n := int(f)
		*dst = &n
	}
	sub := func(dst **gschema.Schema, v any) {
		if v == nil {
			return
		}
		*dst, ok = toSchemaAnd(*dst, v, ok)
	}
	list := func(dst *[]*gschema.Schema, v any) {
		if v == nil {
			return
		}
		*dst, ok = schemaArray(v, ok)
	}
	subs := func(dst *map[string]*gschema.Schema, v any) {
		if v == nil {
			return
		}
		*dst, ok = schemaObject(v, ok)
	}
	values := func(dst *[]any, v any) {
		switch x := v.(type) {
		case nil:
		case []any:
			p, good := decoded(x)
			if !good {
				ok = false
				return
			}
			*dst = p.([]any)
		default:
			ok = false
		}
	}
	for k, v := range m {
		if !ok {
			return nil, false
		}
		switch k {
		case "type":
			switch x := v.(type) {
			case string:
				s.Type = x
			case []any:
				s.Types = make([]string, len(x))
				for i, t := range x {
					ts, isStr := t.(string)
					if !isStr {
						return nil, false
					}
					s.Types[i] = ts
				}
			default:
				return nil, false
			}
		case "dependencies":
			deps, isObj := v.(map[string]any)
			if !isObj && v != nil {
				return nil, false
			}
			for dk, dv := range deps {
				switch x := dv.(type) {
				case []any:
					ss, good := stringArray(x)
					if !good {
						return nil, false
					}
					if s.DependencyStrings == nil {
						s.DependencyStrings = map[string][]string{}
					}
					s.DependencyStrings[dk] = ss
				case nil:
					return nil, false
				default:
					d, good := toSchema(x)
					if !good {
						return nil, false
					}
					if s.DependencySchemas == nil {
						s.DependencySchemas = map[string]*gschema.Schema{}
					}
					s.DependencySchemas[dk] = d
				}
			}
		case "items":
			switch x := v.(type) {
			case []any:
				s.ItemsArray, ok = schemaArray(x, ok)
			case nil:
				return nil, false
			default:
				s.Items, ok = toSchemaAnd(nil, x, ok)
			}
		case "const":
			c, good := decoded(v)
			s.Const, ok = &c, ok && good
		case "$id":
			str(&s.ID, v)
		case "$schema":
			str(&s.Schema, v)
		case "$ref":
			str(&s.Ref, v)
		case "$comment":
			str(&s.Comment, v)
		case "$defs":
			subs(&s.Defs, v)
		case "definitions":
			subs(&s.Definitions, v)
		case "$anchor":
			str(&s.Anchor, v)
		case "$dynamicAnchor":
			str(&s.DynamicAnchor, v)
		case "$dynamicRef":
			str(&s.DynamicRef, v)
		case "$vocabulary":
			voc, isObj := v.(map[string]any)
			if !isObj && v != nil {
				return nil, false
			}
			if voc != nil {
				s.Vocabulary = make(map[string]bool, len(voc))
				for vk, vv := range voc {
					b, isBool := vv.(bool)
					if !isBool {
						return nil, false
					}
					s.Vocabulary[vk] = b
				}
			}
		case "title":
			str(&s.Title, v)
		case "description":
			str(&s.Description, v)
		case "default":
			b, err := json.Marshal(v)
			s.Default, ok = b, err == nil
		case "deprecated":
			flag(&s.Deprecated, v)
		case "readOnly":
			flag(&s.ReadOnly, v)
		case "writeOnly":
			flag(&s.WriteOnly, v)
		case "examples":
			values(&s.Examples, v)
		case "enum":
			values(&s.Enum, v)
		case "multipleOf":
			num(&s.MultipleOf, v)
		case "minimum":
			num(&s.Minimum, v)
		case "maximum":
			num(&s.Maximum, v)
		case "exclusiveMinimum":
			num(&s.ExclusiveMinimum, v)
		case "exclusiveMaximum":
			num(&s.ExclusiveMaximum, v)
		case "minLength":
			count(&s.MinLength, v)
		case "maxLength":
			count(&s.MaxLength, v)
		case "pattern":
			str(&s.Pattern, v)
		case "prefixItems":
			list(&s.PrefixItems, v)
		case "minItems":
			count(&s.MinItems, v)
		case "maxItems":
			count(&s.MaxItems, v)
		case "additionalItems":
			sub(&s.AdditionalItems, v)
		case "uniqueItems":
			flag(&s.UniqueItems, v)
		case "contains":
			sub(&s.Contains, v)
		case "minContains":
			count(&s.MinContains, v)
		case "maxContains":
			count(&s.MaxContains, v)
		case "unevaluatedItems":
			sub(&s.UnevaluatedItems, v)
		case "minProperties":
			count(&s.MinProperties, v)
		case "maxProperties":
			count(&s.MaxProperties, v)
		case "required":
			switch x := v.(type) {
			case nil:
			case []any:
				s.Required, ok = stringArray(x)
			default:
				return nil, false
			}
		case "dependentRequired":
			dr, isObj := v.(map[string]any)
			if !isObj && v != nil {
				return nil, false
			}
			if dr != nil {
				s.DependentRequired = make(map[string][]string, len(dr))
				for dk, dv := range dr {
					a, isArr := dv.([]any)
					if !isArr {
						return nil, false
					}
					if s.DependentRequired[dk], ok = stringArray(a); !ok {
						return nil, false
					}
				}
			}
		case "properties":
			subs(&s.Properties, v)
		case "patternProperties":
			subs(&s.PatternProperties, v)
		case "additionalProperties":
			sub(&s.AdditionalProperties, v)
		case "propertyNames":
			sub(&s.PropertyNames, v)
		case "unevaluatedProperties":
			sub(&s.UnevaluatedProperties, v)
		case "allOf":
			list(&s.AllOf, v)
		case "anyOf":
			list(&s.AnyOf, v)
		case "oneOf":
			list(&s.OneOf, v)
		case "not":
			sub(&s.Not, v)
		case "if":
			sub(&s.If, v)
		case "then":
			sub(&s.Then, v)
		case "else":
			sub(&s.Else, v)
		case "dependentSchemas":
			subs(&s.DependentSchemas, v)
		case "contentEncoding":
			str(&s.ContentEncoding, v)
		case "contentMediaType":
			str(&s.ContentMediaType, v)
		case "contentSchema":
			sub(&s.ContentSchema, v)
		case "format":
			str(&s.Format, v)
		default:
			p, good := decoded(v)
			if !good {
				return nil, false
			}
			if extra == nil {
				extra = map[string]any{}
			}
			extra[k] = p
		}
	}
	if !ok {
		return nil, false
	}
	s.Extra = extra
	return s, true
}

// toSchemaAnd converts v when ok, keeping ok false once it is.
func toSchemaAnd(keep *gschema.Schema, v any, ok bool) (*gschema.Schema, bool) {
	if !ok {
		return keep, false
	}
	return toSchema(v)
}

// schemaArray converts a list of schemas when ok.
func schemaArray(v any, ok bool) ([]*gschema.Schema, bool) {
	a, isArr := v.([]any)
	if !ok || !isArr {
		return nil, false
	}
	return convertAll(a, toSchema)
}

// schemaObject converts an object of schemas when ok.
func schemaObject(v any, ok bool) (map[string]*gschema.Schema, bool) {
	m, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil, false
	}
	return convertValues(m, toSchema)
}

// stringArray converts a list of strings.
func stringArray(a []any) ([]string, bool) {
	return convertAll(a, func(e any) (string, bool) { s, ok := e.(string); return s, ok })
}

// float is a JSON number as encoding/json decodes it into a float64.
func float(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsInf(x, 0) && !math.IsNaN(x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// decoded returns a copy of a JSON value as encoding/json decodes it into
// an any: numbers as float64, objects and arrays copied.
func decoded(v any) (any, bool) {
	return copyJSON(v, func(v any) (any, bool) { return float(v) })
}
