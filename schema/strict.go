package schema

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
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
		c.change(child(n.path(c), "additionalProperties"), "set to false", c.strictProblem(needsClosed))
	}
	req := requiredOf(n.m)
	var all []any // required, then the optional names; nil until one is optional
	// The names in order, with their values: as children sorted them
	// while props is the map it made (and then with what it compiled of
	// each, and what it removed), else sorted here.
	start, end := n.namesAt, n.namesEnd
	held := n.ownProps && n.propNames && mapAddr(props) == mapAddr(n.outProps)
	if !held {
		start, end = c.pushNames(props)
	}
	for i := start; i < end; i++ {
		e := c.names[c.byName[i]]
		k, v := e.name, e.src
		if held {
			if e.removed {
				continue
			}
			v = e.out
		}
		if !containsString(req, k) {
			if all == nil { // room for this name and every one after it
				all = make([]any, len(req), len(req)+end-i)
				copy(all, req)
			}
			all = append(all, k)
			// A settled leaf that node shared is copied; the copy,
			// made nullable in its type list and enum, is a leaf too.
			shared := held && sameMap(v, e.src)
			out := c.nullableSchema(v, held && !shared, shared)
			if shared && c.d.typeArrays {
				c.addLeaf(out.(map[string]any))
			}
			props[k] = out
		}
	}
	if !held {
		c.popNames(start)
	}
	switch {
	case all != nil:
		n.m["required"] = all
	case req == nil: // no list (or a nil one): an empty one
		n.m["required"] = []any{}
	}
	// Else every property was required: the list stays as it is, the
	// same names in the same order, shared like any list of values.
	//
	// One change per optional property, in the order of the names as
	// before (making a schema nullable reports nothing), their paths cut
	// from one string.
	if all != nil {
		opt := all[len(req):]
		paths := c.propertyPaths(n.path(c), opt)
		problem, at := c.strictProblem(needsRequired), 0
		for i := range opt {
			end := int(c.cuts[i])
			c.change(paths[at:end], "made required and nullable: null stands for leaving it out", problem)
			at = end
		}
	}
}

// propertyPaths returns the paths child(child(path, "properties"), name)
// of the names (strings) one after the other in one string, and leaves in
// c.cuts where each ends: a path per property cut from one allocation
// instead of one each.
func (c *compiler) propertyPaths(path string, names []any) string {
	prefix := "properties"
	if path != "" {
		prefix = path + ".properties"
	}
	var b strings.Builder
	size := 0
	for _, v := range names {
		size += len(prefix) + 1 + len(v.(string))
	}
	b.Grow(size)
	c.cuts = c.cuts[:0]
	for _, v := range names {
		b.WriteString(prefix)
		writeChild(&b, v.(string))
		c.cuts = append(c.cuts, int32(b.Len()))
	}
	return b.String()
}

// Problems of strict mode on every object, after the dialect's name (see
// strictProblem).
const (
	needsClosed = iota
	needsRequired
)

var strictProblems = [...]string{
	needsClosed:   " needs additionalProperties: false on every object",
	needsRequired: " needs every property in required",
}

// strictProblem returns the dialect's name then strictProblems[i], made
// once per dialect and compiler rather than for every object (strings are
// immutable: the reports share them).
func (c *compiler) strictProblem(i int) string {
	if c.problemsOf != c.d.name {
		c.problemsOf, c.problems = c.d.name, [len(strictProblems)]string{}
	}
	if c.problems[i] == "" {
		c.problems[i] = c.d.name + strictProblems[i]
	}
	return c.problems[i]
}

// sameMap reports whether a and b are the same map (not equal maps: one
// map, two references to it).
func sameMap(a, b any) bool {
	x, ok := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	return ok && ok2 && mapAddr(x) == mapAddr(y)
}

// nullableSchema returns a compiled schema that also accepts null. It
// changes v itself when owned says no one else holds it. settled says v
// is a settled leaf (see leafKind), which holds no hintKey.
func (c *compiler) nullableSchema(v any, owned, settled bool) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if !owned {
		m = maps.Clone(m)
	}
	n := &nodeState{m: m, level: -1, pathStr: "(nullable)", nullable: true, fresh: settled}
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
	case c.d.typeArrays && c.typeArrayNullable(n.m, n.fresh):
	case c.d.nullableKeyword():
		n.m["nullable"] = true
	case c.d.unions():
		if alts, ok := n.m["anyOf"].([]any); ok && unionTakesNull(n.m) {
			if !slices.ContainsFunc(alts, isNullSchema) {
				n.m["anyOf"] = with(alts, map[string]any{"type": "null"})
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

// with returns a new list: list, then v. One allocation of the exact
// length, where appending to a clone allocates twice (the clone is full).
func with(list []any, v any) []any {
	out := make([]any, len(list)+1)
	copy(out, list)
	out[len(list)] = v
	return out
}

// typeArrayNullable says that m accepts null in a type list and its enum
// (a const becomes the enum [const, null]), reading each of the three
// keywords once, and not const when fresh says m is a copy of a leaf or
// simple container (see nodeState.fresh), which has none. It reports
// false, changing nothing, when m has none of them.
func (c *compiler) typeArrayNullable(m map[string]any, fresh bool) bool {
	tv, hasType := m["type"]
	ev, hasEnum := m["enum"]
	var cst any
	hasConst := false
	if !fresh {
		cst, hasConst = m["const"]
	}
	if !hasType && !hasEnum && !hasConst {
		return false
	}
	switch t := tv.(type) {
	case string:
		if t != "null" {
			m["type"] = c.orNull(t, tv)
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			m["type"] = with(t, "null")
		}
	}
	if hasConst && cst != nil {
		delete(m, "const")
		m["enum"] = []any{cst, nil}
		return true
	}
	if e, ok := ev.([]any); ok && !slices.Contains(e, nil) {
		m["enum"] = with(e, nil)
	}
	return true
}

// orNull returns the type list [t, "null"] as an interface (a []any);
// boxed is t as an interface. The list of each JSON type is made once for
// the process (nullTypes) and shared by every result that needs it, boxed
// once too (a slice stored in a map[string]any is otherwise boxed anew
// each time): a compiled schema is read-only (see Compile). Most
// compilations make one or two properties nullable per type, so lists
// made per compilation cost two allocations for nearly every use.
func (c *compiler) orNull(t string, boxed any) any {
	if i := jsonTypeIndex(t); i >= 0 {
		return nullTypes[i]
	}
	return []any{boxed, "null"}
}

// nullTypes holds [t, "null"] for each t of jsonTypes, at its index.
var nullTypes = func() (lists [7]any) {
	for i, t := range jsonTypes {
		lists[i] = []any{t, "null"}
	}
	return lists
}()

// jsonTypeIndex returns the index of t in jsonTypes, or -1.
func jsonTypeIndex(t string) int {
	switch t {
	case "null":
		return 0
	case "boolean":
		return 1
	case "integer":
		return 2
	case "number":
		return 3
	case "string":
		return 4
	case "array":
		return 5
	case "object":
		return 6
	}
	return -1
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
	props, enums, deepest := c.limitCounts(root)
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

// limitCounts walks the compiled schema root for what strict mode limits:
// the properties and enum values in all, and how deep objects nest.
// Schemas the compiler recorded as leaves (see addLeaf) are not read
// beyond their enum: a leaf holds no object, property or subschema.
func (c *compiler) limitCounts(root map[string]any) (props, enums, deepest int) {
	var walk func(v any, depth, budget int)
	walk = func(v any, depth, budget int) {
		m, ok := v.(map[string]any)
		if !ok || budget <= 0 {
			return
		}
		if c.isLeaf(m) {
			if l, ok := m["enum"].([]any); ok {
				enums += len(l)
			}
			return
		}
		// One pass over the keys (counts and a maximum: any order); the
		// subschemas are walked after it, once the node's type is known.
		var ps map[string]any
		var items, anyOf, defs, definitions any
		object := false
		for k, e := range m {
			switch k {
			case "type":
				switch t := e.(type) {
				case string:
					object = t == "object"
				case []any:
					object = slices.Contains(t, any("object"))
				}
			case "properties":
				ps, _ = e.(map[string]any)
			case "enum":
				if l, ok := e.([]any); ok {
					enums += len(l)
				}
			case "items":
				items = e
			case "anyOf":
				anyOf = e
			case "$defs":
				defs = e
			case "definitions":
				definitions = e
			}
		}
		if object {
			depth++
			deepest = max(deepest, depth)
		}
		props += len(ps)
		for _, s := range ps {
			walk(s, depth, budget-1)
		}
		walk(items, depth, budget-1)
		for _, x := range [...]any{anyOf, defs, definitions} {
			switch x := x.(type) {
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
	walk(root, 0, maxDepth)
	return props, enums, deepest
}

// addLeaf records m, a schema of the result that is and stays a leaf: a
// string, number, integer or boolean (or it or null) with no subschema,
// property, or anything but annotations, bounds, a pattern, a format and
// an enum. Only strict mode records them, for limitCounts. The set holds
// the maps themselves beside their addresses, so that none is freed and
// its address reused by another map while the compilation runs.
func (c *compiler) addLeaf(m map[string]any) {
	if c.leaves == nil {
		c.leaves = map[uintptr]map[string]any{}
	}
	c.leaves[mapAddr(m)] = m
}

// isLeaf reports whether addLeaf recorded m.
func (c *compiler) isLeaf(m map[string]any) bool {
	_, ok := c.leaves[mapAddr(m)]
	return ok
}

// mapAddr returns the address of the map m refers to, which tells one map
// from another equal map.
func mapAddr(m map[string]any) uintptr {
	return reflect.ValueOf(m).Pointer()
}
