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
			// A settled leaf that node shared is copied.
			shared := held && sameMap(v, e.src)
			props[k] = c.nullableSchema(v, held && !shared, shared)
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
// compiled schema exceeds. The result is walked for its counts only when
// the bounds tallied while compiling (see tally) allow that it exceeds
// one: the walk read every node of every result again, 10% of strict
// mode's compile of the corpus with what it took to skip leaves in it
// (see bench/HISTORY.md, third pass, part 3).
func (c *compiler) strictLimits(root map[string]any) {
	b := c.bounds
	if b.props <= strictMaxProperties && b.enums <= strictMaxEnumValues && b.levels+1 <= strictMaxNesting {
		return
	}
	props, enums, deepest := limitCounts(root)
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

// limitBounds are upper bounds of what limitCounts counts in a result,
// tallied while compiling it: the properties and enum values of every
// compiled node, and how deep nodes nest.
type limitBounds struct {
	// props: the properties of every node as compiled. A node's result
	// lands once in the result, or is merged into its parent's (which is
	// tallied with them again); nothing adds properties to it after.
	props int
	// enums: the enum values of every node as compiled, and 2 more for
	// each: strictNode may then make it nullable (null added to its
	// enum, or a const made the enum [const, null]).
	enums int
	// levels: the most places on the stack below the root; an object in
	// the result has at most that many objects above it (merges only
	// lift schemas, and a nullable's anyOf is no object).
	levels int
}

// tally adds out, a node just compiled, to c.bounds.
func (c *compiler) tally(out any) {
	m, ok := out.(map[string]any)
	if !ok {
		return
	}
	if p, ok := m["properties"].(map[string]any); ok {
		c.bounds.props += len(p)
	}
	e, _ := m["enum"].([]any)
	c.bounds.enums += len(e) + 2
}

// limitCounts walks the compiled schema root for what strict mode limits:
// the properties and enum values in all, and how deep objects nest.
func limitCounts(root map[string]any) (props, enums, deepest int) {
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
		for k, e := range m {
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
	return props, enums, deepest
}

// mapAddr returns the address of the map m refers to, which tells one map
// from another equal map.
func mapAddr(m map[string]any) uintptr {
	return reflect.ValueOf(m).Pointer()
}
