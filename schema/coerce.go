package schema

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/internal/jsonschema"
)

// Coercion is one argument value [Validator.Coerce] changed.
type Coercion struct {
	// Path locates the value: "edits[0].count"; "" is the root.
	Path string `json:"path"`
	// From is the value as received.
	From any `json:"from"`
	// To is the value it became; nil when it was removed.
	To any `json:"to,omitempty"`
	// Removed is set when a null was removed: it stood for leaving out an
	// optional property whose schema does not allow null.
	Removed bool `json:"removed,omitempty"`
}

// String renders the coercion: `count: "5" → 5`.
func (c Coercion) String() string {
	p := c.Path
	if p == "" {
		p = "(root)"
	}
	if c.Removed {
		return p + ": null removed (the property is optional)"
	}
	return p + ": " + literal(c.From) + " → " + literal(c.To)
}

// Coerce fixes, in place, argument values whose meaning is unambiguous but
// whose JSON type the schema does not allow, as weaker models send them:
//
//   - a string holding a JSON number where the schema wants a number or an
//     integer ("5" → 5, " 2.5 " → 2.5; an integer field takes only whole
//     numbers, written canonically: "1e3" → 1000),
//   - "true" or "false" (any case) where it wants a boolean,
//   - a number where it wants a string (5 → "5"),
//   - null for an optional property whose schema does not allow null: the
//     property is removed (strict-mode providers send null for "absent").
//
// A value is changed only where the schema says for certain what it wants:
// the types every schema that applies there (through properties, items,
// additionalProperties, patternProperties, $ref and allOf) agrees on, and
// never a type the value already has. Unions are left alone. Coerce returns
// what it changed, in path order; the arguments should then be validated as
// usual. Numbers it writes are json.Number.
func (v *Validator) Coerce(args map[string]any) []Coercion {
	var out []Coercion
	coerceObject(applicable(v.compiled, nil, 0), args, "", &out, 0)
	slices.SortStableFunc(out, func(a, b Coercion) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// maxCoerceDepth bounds how deep coercion follows arguments and references.
const maxCoerceDepth = 64

// applicable appends s and the schemas that apply wherever it does: its
// reference targets and allOf members.
func applicable(s *jsonschema.Schema, out []*jsonschema.Schema, depth int) []*jsonschema.Schema {
	if s == nil || depth > maxCoerceDepth || slices.Contains(out, s) {
		return out
	}
	out = append(out, s)
	out = applicable(s.Ref, out, depth+1)
	for _, a := range s.AllOf {
		out = applicable(a, out, depth+1)
	}
	return out
}

// typeBit is the bit of each JSON type in a jsonschema.Types set, learnt
// through its API.
var typeBit = func() map[string]int {
	bits := map[string]int{}
	for _, name := range jsonTypes {
		var t jsonschema.Types
		t.Add(name)
		bits[name] = int(t)
	}
	return bits
}()

// wanted returns the set of types the schemas all allow, an integer being
// a number, and whether any of them says.
func wanted(schemas []*jsonschema.Schema) (int, bool) {
	mask, known := 0, false
	for _, s := range schemas {
		if s.Types == nil {
			continue
		}
		m := int(*s.Types)
		if m&typeBit["number"] != 0 {
			m |= typeBit["integer"]
		}
		if !known {
			mask, known = m, true
		} else {
			mask &= m
		}
	}
	return mask, known
}

func coerceObject(schemas []*jsonschema.Schema, obj map[string]any, path string, out *[]Coercion, depth int) {
	if depth > maxCoerceDepth {
		return
	}
	var buf [4]*jsonschema.Schema
	for k, val := range obj {
		props := propertySchemas(buf[:0], schemas, k)
		if len(props) == 0 {
			continue
		}
		if val == nil {
			types, known := wanted(props)
			if known && types&typeBit["null"] == 0 && !requires(schemas, k) {
				delete(obj, k)
				*out = append(*out, Coercion{Path: child(path, k), Removed: true})
			}
			continue
		}
		if to, ok := coerceValue(props, val, path, k, -1, out, depth); ok {
			obj[k] = to
		}
	}
}

// coerceValue coerces one value, at key k (or index i when k is "") of
// the container at path, against the schemas that apply to it and reports
// the new value, if it changed. The path is only built when needed.
func coerceValue(schemas []*jsonschema.Schema, val any, path, k string, i int, out *[]Coercion, depth int) (any, bool) {
	here := func() string {
		if i >= 0 {
			return index(path, i)
		}
		return child(path, k)
	}
	switch x := val.(type) {
	case map[string]any:
		coerceObject(schemas, x, here(), out, depth+1)
		return nil, false
	case []any:
		p := here()
		var buf [4]*jsonschema.Schema
		for j, e := range x {
			if to, ok := coerceValue(itemSchemas(buf[:0], schemas, j), e, p, "", j, out, depth+1); ok {
				x[j] = to
			}
		}
		return nil, false
	}
	types, known := wanted(schemas)
	if !known || allows(types, val) {
		return nil, false
	}
	to, ok := convert(types, val)
	if ok {
		*out = append(*out, Coercion{Path: here(), From: val, To: to})
	}
	return to, ok
}

// numberText is the JSON number grammar.
var numberText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// convert turns a scalar into one of the wanted types when exactly what it
// means is clear.
func convert(types int, val any) (any, bool) {
	switch x := val.(type) {
	case string:
		s := strings.TrimSpace(x)
		if types&typeBit["boolean"] != 0 {
			switch strings.ToLower(s) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		}
		if !numberText.MatchString(s) {
			return nil, false
		}
		if types&typeBit["number"] != 0 {
			return json.Number(s), true
		}
		if types&typeBit["integer"] != 0 {
			if r, ok := rat(json.Number(s)); ok && r.IsInt() {
				return json.Number(r.Num().String()), true
			}
		}
	case json.Number:
		if types&typeBit["string"] != 0 {
			return string(x), true
		}
	case float64:
		if types&typeBit["string"] != 0 {
			return strconv.FormatFloat(x, 'g', -1, 64), true
		}
	}
	return nil, false
}

// allows reports whether a value already has one of the types.
func allows(types int, val any) bool {
	if isNumber(val) && types&typeBit["number"] != 0 {
		return true // no need to tell an integer
	}
	return types&typeBit[valueType(val)] != 0
}

// propertySchemas appends to out the schemas that apply to property k of
// an object the given schemas apply to.
func propertySchemas(out, schemas []*jsonschema.Schema, k string) []*jsonschema.Schema {
	for _, s := range schemas {
		if p, ok := s.Properties[k]; ok {
			out = applicable(p, out, 0)
			continue
		}
		matched := false
		for re, p := range s.PatternProperties {
			if re.MatchString(k) {
				out = applicable(p, out, 0)
				matched = true
			}
		}
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
			out = applicable(ap, out, 0)
		}
	}
	return out
}

// itemSchemas appends to out the schemas that apply to item i of an array
// the given schemas apply to.
func itemSchemas(out, schemas []*jsonschema.Schema, i int) []*jsonschema.Schema {
	for _, s := range schemas {
		switch {
		case i < len(s.PrefixItems):
			out = applicable(s.PrefixItems[i], out, 0)
		case s.Items2020 != nil:
			out = applicable(s.Items2020, out, 0)
		}
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			out = applicable(items, out, 0)
		case []*jsonschema.Schema:
			if i < len(items) {
				out = applicable(items[i], out, 0)
			} else if ai, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				out = applicable(ai, out, 0)
			}
		}
	}
	return out
}

// requires reports whether any of the schemas requires property k.
func requires(schemas []*jsonschema.Schema, k string) bool {
	for _, s := range schemas {
		if slices.Contains(s.Required, k) {
			return true
		}
	}
	return false
}
