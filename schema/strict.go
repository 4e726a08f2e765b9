package schema

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// OpenAI's documented limits on a strict schema.
const (
	strictMaxProperties = 5000
	strictMaxNesting    = 10
	strictMaxEnumValues = 1000
)

// strictNode applies strict mode to one compiled node: an object is closed
// and every property required, the optional ones made nullable (null
// stands for leaving the property out; see [Validator.Coerce]). A node that
// cannot be strict is recorded in the report.
func (c *compiler) strictNode(n *nodeState) {
	if !hasType(n.m, "object") && !hasKey(n.m, "properties") {
		if !hasKey(n.m, "type") && !hasKey(n.m, "enum") && !hasKey(n.m, "const") && !hasKey(n.m, "anyOf") && !hasKey(n.m, "$ref") {
			c.notStrict(n.path(c), "a value of any type cannot be strict")
		}
		return
	}
	if n.open {
		c.notStrict(n.path(c), "an object that takes keys beyond its declared properties (a map: additionalProperties, patternProperties, or no properties at all) cannot be strict")
		if ap := n.m["additionalProperties"]; ap == nil || ap == false {
			// patternProperties went into the description: say open.
			n.m["additionalProperties"] = true
			c.change(child(n.path(c), "additionalProperties"), "set to true: keys beyond the declared properties are allowed", "")
		}
		return
	}
	props, _ := n.m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		n.m["properties"] = props
	}
	if n.m["additionalProperties"] != false {
		n.m["additionalProperties"] = false
		c.change(child(n.path(c), "additionalProperties"), "set to false", c.d.name+" needs additionalProperties: false on every object")
	}
	req := requiredOf(n.m)
	all := make([]any, len(req), len(props)+len(req)) // required, then the optional names
	copy(all, req)
	var base, problem string // the same for every property: built once
	// The names in order: as children sorted them while props is the map
	// it made, else sorted here.
	start, end := n.namesAt, n.namesEnd
	held := n.ownProps && n.propNames
	if !held {
		start, end = c.pushNames(props)
	}
	for i := start; i < end; i++ {
		k := c.names[i]
		if _, ok := props[k]; !ok { // a property children removed
			continue
		}
		if !containsString(req, k) {
			if base == "" {
				base, problem = child(n.path(c), "properties"), c.d.name+" needs every property in required"
			}
			all = append(all, k)
			props[k] = c.nullableSchema(props[k], n.ownProps && !sameMap(props[k], n.srcProps[k]))
			c.change(child(base, k), "made required and nullable: null stands for leaving it out", problem)
		}
	}
	if !held {
		c.popNames(start)
	}
	n.m["required"] = all
}

// sameMap reports whether a and b are the same map (not equal maps: one
// map, two references to it).
func sameMap(a, b any) bool {
	x, ok := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	return ok && ok2 && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

// nullableSchema returns a compiled schema that also accepts null. It
// changes v itself when owned says no one else holds it.
func (c *compiler) nullableSchema(v any, owned bool) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if !owned {
		m = maps.Clone(m)
	}
	n := &nodeState{m: m, level: -1, pathStr: "(nullable)", nullable: true}
	c.sayNullable(n)
	c.describe(n)
	return n.m
}

// sayNullable says that a node accepts null in the dialect's way: a type
// array, "nullable": true, or an anyOf with a null alternative.
func (c *compiler) sayNullable(n *nodeState) {
	if !n.nullable || n.isRoot() {
		return
	}
	switch {
	case c.d.typeArrays && (hasKey(n.m, "type") || hasKey(n.m, "enum") || hasKey(n.m, "const")):
		switch t := n.m["type"].(type) {
		case string:
			if t != "null" {
				n.m["type"] = c.orNull(t, n.m["type"])
			}
		case []any:
			if !slices.Contains(t, any("null")) {
				n.m["type"] = append(slices.Clone(t), "null")
			}
		}
		if cst, ok := n.m["const"]; ok && cst != nil {
			delete(n.m, "const")
			n.m["enum"] = []any{cst}
		}
		if e, ok := n.m["enum"].([]any); ok && !slices.Contains(e, nil) {
			n.m["enum"] = append(slices.Clone(e), nil)
		}
	case c.d.nullableKeyword():
		n.m["nullable"] = true
	case c.d.unions():
		if alts, ok := n.m["anyOf"].([]any); ok && unionTakesNull(n.m) {
			if !slices.ContainsFunc(alts, isNullSchema) {
				n.m["anyOf"] = append(slices.Clone(alts), map[string]any{"type": "null"})
			}
			return
		}
		inner := maps.Clone(n.m)
		outer := map[string]any{}
		for _, k := range []string{"description", hintKey} {
			if v, ok := inner[k]; ok {
				outer[k] = v
				delete(inner, k)
			}
		}
		outer["anyOf"] = []any{inner, map[string]any{"type": "null"}}
		n.m = outer
	default:
		n.hints = append(n.hints, "or null")
	}
}

// orNull returns the type list [t, "null"]; boxed is t as an interface.
// The list of each JSON type is made once per compilation and shared by
// the nodes that need it: a compiled schema is read-only (see Compile).
func (c *compiler) orNull(t string, boxed any) []any {
	i := slices.Index(jsonTypes, t)
	if i < 0 {
		return []any{boxed, "null"}
	}
	if c.orNulls[i] == nil {
		c.orNulls[i] = []any{boxed, "null"}
	}
	return c.orNulls[i]
}

// unionTakesNull reports whether a null alternative added to a schema's
// anyOf lets null through: no keyword beside it refuses null (the others
// apply to objects, arrays, strings or numbers only).
func unionTakesNull(m map[string]any) bool {
	for _, k := range []string{"type", "enum", "const", "not", "allOf", "oneOf", "$ref", "if"} {
		if hasKey(m, k) {
			return false
		}
	}
	return true
}

// strictLimits records the documented limits of strict mode that the
// compiled schema exceeds.
func (c *compiler) strictLimits(root map[string]any) {
	var props, enums, deepest int
	var walk func(v any, depth, budget int)
	walk = func(v any, depth, budget int) {
		m, ok := v.(map[string]any)
		if !ok || budget <= 0 {
			return
		}
		if hasType(m, "object") {
			depth++
			deepest = max(deepest, depth)
		}
		for k, e := range m { // counts and a maximum: any order
			switch k {
			case "properties":
				if p, ok := e.(map[string]any); ok {
					props += len(p)
					for _, s := range p {
						walk(s, depth, budget-1)
					}
				}
			case "enum":
				if l, ok := e.([]any); ok {
					enums += len(l)
				}
			case "items":
				walk(e, depth, budget-1)
			case "anyOf", "$defs", "definitions":
				switch x := e.(type) {
				case []any:
					for _, s := range x {
						walk(s, depth, budget-1)
					}
				case map[string]any:
					for _, s := range x {
						walk(s, depth, budget-1)
					}
				}
			}
		}
	}
	walk(root, 0, maxDepth)
	if props > strictMaxProperties {
		c.notStrict("", fmt.Sprintf("%d properties in all: strict mode takes at most %d", props, strictMaxProperties))
	}
	if deepest > strictMaxNesting {
		c.notStrict("", fmt.Sprintf("objects nest %d levels deep: strict mode takes at most %d", deepest, strictMaxNesting))
	}
	if enums > strictMaxEnumValues {
		c.notStrict("", fmt.Sprintf("%d enum values in all: strict mode takes at most %d", enums, strictMaxEnumValues))
	}
}
