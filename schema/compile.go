package schema

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Limits of one compilation. A schema beyond them still compiles: the part
// that does not fit is replaced by a typed placeholder whose description
// says so, and the original is still what arguments are checked against.
const (
	maxDepth  = 64   // schema nesting followed
	maxNodes  = 5000 // schema nodes emitted
	maxRounds = 32   // rounds of reference, allOf and union rewriting on one node
)

// hintKey holds, inside a schema being compiled, descriptions of
// constraints that merging could not keep as keywords. Decoded JSON cannot
// produce its value type ([]string), so it never collides with input.
const hintKey = "\x00hints"

// Compile returns doc compiled into the dialect, and a report of every
// change. doc is a JSON Schema in the generic JSON form (see [Decode] and
// [FromSchema]); it is not modified.
//
// The result always describes an object, {"type":"object","properties":{…}}.
// It keeps every property of doc: what the dialect cannot express is
// rewritten (references inlined, unions and allOf merged, nullable and
// literal unions simplified) or moved into the nearest description in a
// compact form a model reads easily, "(format: uuid; 1–64 chars)". Compile
// the result again and nothing changes.
//
// The compiled schema is for the provider; arguments must still be checked
// against doc itself (see [Compile]), which holds every constraint.
//
// The compiled schema is read-only, and so is doc while the result is in
// use: the result shares with doc the parts that compile unchanged (a
// property that is a plain string, number, integer or boolean the dialect
// takes as it is, lists of values), so a change to either may show in the
// other; and results share with one another the few lists the compiler
// makes once for all ([type, "null"]). Encode it, or copy it before
// changing it.
func (d Dialect) Compile(doc any) (map[string]any, Report) {
	return d.compile(doc, false)
}

// compile is Compile; slowLeaves sends settled leaves through every pass.
func (d Dialect) compile(doc any, slowLeaves bool) (map[string]any, Report) {
	c := compilers.Get().(*compiler)
	defer c.release()
	return c.run(d, doc, slowLeaves)
}

// run is one compilation by c, a compiler new or released.
func (c *compiler) run(d Dialect, doc any, slowLeaves bool) (map[string]any, Report) {
	c.d, c.root, c.slowLeaves = d, doc, slowLeaves
	c.movable = c.movableDefinitions()
	out := c.compileRoot(doc)
	if d.strict {
		c.strictLimits(out)
	}
	// The lists are the compiler's, kept for the next compilation: the
	// report gets copies of their exact length (Changes never nil), in
	// the order of their paths.
	rep := Report{Dialect: d.name, Changes: make([]Change, len(c.rep.Changes))}
	byPath(rep.Changes, c.rep.Changes)
	if len(c.rep.NotStrict) > 0 {
		rep.NotStrict = make([]Change, len(c.rep.NotStrict))
		byPath(rep.NotStrict, c.rep.NotStrict)
	}
	return out, rep
}

// byPath copies src into dst, of the same length, sorted by path, changes
// at one path in the order they were made. Most reports are made in order
// already (two in three of the corpus's for openai-strict): one pass tells.
// The others are sorted as indices, the order they were made breaking
// ties, rather than moving the changes (three strings each) through a
// stable sort: sorting cost 7.3% of openai-strict's compile, 3.2% so
// (see bench/HISTORY.md, third pass, part 2).
func byPath(dst, src []Change) {
	byPath := func(a, b Change) int { return strings.Compare(a.Path, b.Path) }
	if slices.IsSortedFunc(src, byPath) {
		copy(dst, src)
		return
	}
	order := make([]int32, len(src))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := byPath(src[a], src[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for i, j := range order {
		dst[i] = src[j]
	}
}

// compilers holds compilers between compilations, with the room their
// stacks and the report's lists grew to: a compilation then allocates
// little beyond the schema it returns.
//
// It is needed for the aim of compiling ≥ 3× faster than OpenClaw's
// normalizer on every dialect: bench/schema.sh 15 40, 2026-11-29, load
// average 6.5, CPU per corpus for openai-strict 2.10 ms with the pool
// (OpenClaw ÷ Toolbelt 3.37×) and 3.20 ms without it (2.21×); gemini 4.36×
// and 3.32×.
var compilers = sync.Pool{New: func() any { return newCompiler() }}

func newCompiler() *compiler { return &compiler{used: map[string]bool{}} }

// maxKept is the most entries a pooled compiler's lists keep room for;
// beyond, they are dropped so that one huge schema does not pin memory.
const maxKept = 1024

// release clears c, keeping the room of its lists, and returns it to the
// pool. Nothing of the compilation stays reachable from it.
func (c *compiler) release() {
	reuse := func(l []Change) []Change {
		if cap(l) > maxKept {
			return nil
		}
		clear(l)
		return l[:0]
	}
	c.rep.Changes, c.rep.NotStrict = reuse(c.rep.Changes), reuse(c.rep.NotStrict)
	clear(c.inline)
	c.inline = c.inline[:0]
	clear(c.places)
	c.places = c.places[:0]
	clear(c.names)
	c.names, c.byName = c.names[:0], c.byName[:0]
	c.cuts = c.cuts[:0]
	if cap(c.inline) > maxKept || cap(c.places) > maxKept || cap(c.names) > maxKept || cap(c.byName) > maxKept || cap(c.cuts) > maxKept || len(c.used) > maxKept {
		c.inline, c.places, c.names, c.byName, c.cuts, c.used = nil, nil, nil, nil, nil, map[string]bool{}
	}
	clear(c.used)
	c.d, c.root, c.movable, c.nodes, c.slowLeaves = Dialect{}, nil, nil, 0, false
	c.bounds = limitBounds{}
	compilers.Put(c)
}

// compiler is the state of one compilation.
type compiler struct {
	d    Dialect
	root any // the document as given, which references point into
	rep  Report
	// inline lists the references being inlined around the current node,
	// outermost first: meeting one of them again is a cycle.
	inline []string
	// used records the root definitions a reference used.
	used map[string]bool
	// movable lists root "definitions" moved to "$defs" for a dialect
	// that keeps references but only under $defs.
	movable map[string]bool
	nodes   int
	// places is the stack of places of the nodes being compiled.
	places []place
	// slowLeaves sends settled leaves through every pass too (for the
	// test that the shortcut changes nothing).
	slowLeaves bool
	// names is a stack of property names being compiled (see children),
	// byName their order by name (see pushNames).
	names  []nameEntry
	byName []int32
	// cuts is propertyPaths' room for the ends of its paths.
	cuts []int32
	// problems holds strictProblem's texts for the dialect problemsOf;
	// kept by the pool (they hold nothing of a compilation).
	problemsOf string
	problems   [len(strictProblems)]string
	// bounds holds, in strict mode, what the compiled nodes let the
	// result reach of strict mode's limits (see tally).
	bounds limitBounds
}

// nodeState is one schema node while it is compiled.
type nodeState struct {
	m map[string]any
	// level is the node's depth on the compiler's stack of places; its path
	// (see path) is built from them only when a change is reported there.
	// -1: the path is pathStr, given as it is.
	level    int
	pathStr  string
	hints    []string // constraints to describe
	nullable bool     // null is allowed, to be said in the dialect's way
	cut      bool     // replaced by a placeholder
	open     bool     // an object that takes keys beyond its properties
	valued   bool     // had an enum: its values say what it accepts
	// ownProps: every value of "properties" is a map compiled for this
	// node and held nowhere else, which strictNode may change in place,
	// except those that are the very maps of the properties as given
	// (settled leaves, shared with the input).
	ownProps bool
	// propNames: the properties as given, with what children compiled of
	// each, are c.names[c.byName[i]] for i in [namesAt, namesEnd), in the
	// order of their names, until node is done with n (children leaves
	// them for strictNode); children made outProps of them.
	propNames         bool
	namesAt, namesEnd int
	outProps          map[string]any
	// simple: a simple container (see simpleContainer), whose keys are
	// keys from its copy to strip.
	simple bool
	keys   uint16
	// fresh: m cannot hold hintKey, being a copy of a plain leaf, a
	// simple container or a settled leaf, which the passes describe
	// through hints only.
	fresh bool
}

// change records a change. problem is what the provider would reject
// without it, "" when it would not.
func (c *compiler) change(path, action, problem string) {
	if cap(c.rep.Changes) == 0 { // most reports with a change have a few
		c.rep.Changes = make([]Change, 0, 8)
	}
	c.rep.Changes = append(c.rep.Changes, Change{Path: path, Action: action, Problem: problem})
}

// notStrict records why the schema cannot be strict.
func (c *compiler) notStrict(path, why string) {
	c.rep.NotStrict = append(c.rep.NotStrict, Change{Path: path, Action: why})
}

// rejects returns the problem of a keyword the dialect does not accept, or
// "" when it accepts it.
func (c *compiler) rejects(keyword string) string {
	if c.d.Accepts(keyword) {
		return ""
	}
	if i := keywordIndex(keyword); i >= 0 && c.d.indexed {
		return c.d.refusals[i]
	}
	if isIdent(keyword) {
		return c.d.name + " does not accept \"" + keyword + "\"" // as %q, in one allocation
	}
	return c.d.name + " does not accept " + strconv.Quote(keyword)
}

// rootOnly are keywords providers refuse at the root of tool parameters.
var rootOnly = []string{"enum", "const", "not", "if", "then", "else"}

// compileRoot compiles the root, which is always an object with properties.
func (c *compiler) compileRoot(doc any) map[string]any {
	var m map[string]any
	switch x := doc.(type) {
	case map[string]any:
		m = maps.Clone(x)
	case nil:
		m = map[string]any{}
	case bool:
		m = map[string]any{}
		if !x {
			m[hintKey] = []string{"accepts no arguments"}
		}
		c.change("", fmt.Sprintf("boolean schema %v compiled as an object", x), "tool parameters must be an object schema")
	default:
		m = map[string]any{}
		c.change("", "not a schema ("+valueType(doc)+"); compiled as an object without properties", "tool parameters must be an object schema")
	}
	defer c.popInline(len(c.inline))
	if c.slowLeaves || !simpleRoot(m) {
		c.rootShape(m)
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
		problem := ""
		if c.d.rootProperties {
			problem = c.d.name + " needs \"properties\" on the root object"
		}
		c.change("properties", "empty properties added", problem)
	}
	out, _ := c.node(m, 0).(map[string]any)
	if c.d.strict {
		c.tally(out)
	}
	if out == nil { // cannot happen: the root is a map
		out = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	c.unusedDefinitions()
	return out
}

// simpleRoot reports whether m, a copy of the root, is a simple container
// (see simpleContainer) of type "object": no reference, union or allOf to
// merge, its type right, none of rootOnly, no nullable. rootShape would
// leave it as it is and report nothing.
func simpleRoot(m map[string]any) bool {
	return m["type"] == "object" && simpleContainer(m) != 0
}

// rootShape makes the root an object: its reference inlined, its unions
// and allOf merged, its type "object", the keywords providers refuse at
// the root moved to its description, nullable removed.
func (c *compiler) rootShape(m map[string]any) {
	for round := 0; round < maxRounds; round++ {
		if !c.rootRound(m) {
			break
		}
	}
	switch t := m["type"].(type) {
	case string:
		if t != "object" {
			c.change("type", fmt.Sprintf("type %q replaced by \"object\": tool arguments are always an object", t), "tool parameters must describe an object")
		}
	case []any:
		c.change("type", "type "+literal(t)+" replaced by \"object\"", "tool parameters must have \"type\": \"object\"")
	case nil:
		c.change("type", `"type": "object" added`, "tool parameters must have \"type\": \"object\"")
	default:
		c.change("type", "invalid type "+literal(t)+" replaced by \"object\"", "tool parameters must have \"type\": \"object\"")
	}
	m["type"] = "object"
	var atRoot []string
	for _, k := range rootOnly {
		if _, ok := m[k]; ok {
			atRoot = append(atRoot, k)
		}
	}
	hints, _ := c.describeKeywords(m, atRoot, 0, nil)
	addHint(m, hints...)
	for _, k := range atRoot {
		delete(m, k)
		c.change(child("", k), "moved to description", fmt.Sprintf("providers do not accept %q at the root of tool parameters", k))
	}
	if _, ok := m["nullable"]; ok {
		delete(m, "nullable")
		c.change("nullable", "removed: tool arguments are never null", "")
	}
}

// rootRound inlines a root reference and merges root unions and allOf,
// which no provider accepts at the root. It reports whether it changed m.
func (c *compiler) rootRound(m map[string]any) bool {
	changed := false
	if ref, ok := m["$ref"]; ok {
		delete(m, "$ref")
		changed = true
		s, _ := ref.(string)
		target, key, err := c.resolve(s)
		switch {
		case err != nil:
			c.change("$ref", err.Error(), "providers do not follow references")
		case slices.Contains(c.inline, key):
			c.change("$ref", "reference "+s+" refers back to the root; removed", "tool parameters must be an object schema")
		default:
			c.inline = append(c.inline, key)
			c.used[key] = true
			overlay(m, target)
			c.change("$ref", "reference "+s+" inlined", "tool parameters must be an object schema, not a reference")
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		delete(m, k)
		changed = true
		path := child("", k)
		var objects []map[string]any
		for i, alt := range c.alternatives(raw, path, k != "allOf") {
			if kindOf(alt) != "object" {
				c.change(index(path, i), "alternative "+c.compact(alt, 0)+" removed: tool arguments are always an object", "")
				continue
			}
			objects = append(objects, alt)
		}
		problem := fmt.Sprintf("providers do not accept %q at the root of tool parameters", k)
		if k == "allOf" {
			for _, alt := range objects {
				intersect(m, alt)
			}
			c.change(path, fmt.Sprintf("%d schemas merged into one object", len(objects)), problem)
			continue
		}
		merged := c.mergeGroup(objects, k == "oneOf")
		if _, ok := m["required"]; ok {
			delete(merged, "required")
		}
		intersect(m, merged)
		c.change(path, fmt.Sprintf("%d alternatives merged into one object", len(objects)), problem)
	}
	return changed
}

// node compiles one schema node, at the place on top of the stack.
func (c *compiler) node(v any, depth int) any {
	n := &nodeState{level: len(c.places)}
	c.nodes++
	if (depth > maxDepth || c.nodes > maxNodes) && !leaf(v) {
		c.change(n.path(c), "cut: the schema nests too deeply or is too large to describe further; arguments are still checked in full", "")
		return c.placeholder(v, "not described further: the schema is too large or deep")
	}
	kind := kindOther
	switch x := v.(type) {
	case map[string]any:
		if !c.slowLeaves {
			kind, n.keys = c.d.nodeKind(x)
		}
		switch {
		case n.isRoot(): // compileRoot's own copy
			n.m = x
		case kind == kindSettled:
			// Shared, not copied: a compiled schema is read-only (see
			// Compile), and no pass changes a node it did not copy.
			return x
		default:
			n.m = maps.Clone(x)
			if kind == kindPlain {
				n.fresh = true
				return c.plainLeaf(n)
			}
		}
	case bool:
		if c.d.booleans() {
			return x
		}
		n.m = map[string]any{}
		if !x {
			n.m[hintKey] = []string{"no value is allowed here"}
		}
		c.change(n.path(c), fmt.Sprintf("boolean schema %v rewritten as an object schema", x), c.d.name+" does not accept boolean schemas")
	default:
		c.change(n.path(c), "not a schema ("+valueType(v)+"); replaced by a schema that accepts any value", "a schema must be a JSON object")
		n.m = map[string]any{}
	}
	defer c.popInline(len(c.inline))
	var inferred string
	switch kind {
	case kindObject: // the passes up to children leave it as it is
		inferred, n.simple, n.fresh = "object", true, true
	case kindArray:
		inferred, n.simple, n.fresh = "array", true, true
	default:
		for round := 0; round < maxRounds && !n.cut; round++ {
			if !c.reshape(n) {
				break
			}
		}
		c.shapes(n)
		c.constToEnum(n)
		inferred = inferType(n.m)
		n.valued = hasKey(n.m, "enum")
		c.tuples(n)
		c.addItems(n, inferred)
	}
	n.open = isOpen(n.m, !n.isRoot())
	c.children(n, depth)
	// A simple container's keys are still those simpleContainer saw
	// (children changes only their values): no union to merge, no enum.
	if c.d.unions() && c.d.simplify && !n.simple {
		// Compiled alternatives may now be simple enough to merge.
		anyOf := c.union(n, "anyOf")
		oneOf := c.union(n, "oneOf")
		if anyOf || oneOf { // merged properties may come from elsewhere
			n.ownProps = false
		}
	}
	c.strip(n)
	if !n.simple {
		c.enums(n)
	}
	c.typed(n, inferred)
	c.typedStrict(n, inferred)
	c.required(n)
	if c.d.strict {
		c.strictNode(n)
	}
	c.sayNullable(n)
	c.describe(n)
	if n.propNames {
		c.popNames(n.namesAt)
	}
	return n.m
}

func (c *compiler) popInline(n int) { c.inline = c.inline[:n] }

// Kinds of schema nodes (see nodeKind), by the passes of node they need.
const (
	kindOther   = iota // every pass
	kindObject         // a simple container (see simpleContainer) of type "object"
	kindArray          // a simple container of type "array"
	kindPlain          // a plain leaf: the passes from strip on (see plainLeaf)
	kindSettled        // a settled leaf: no pass
)

// nodeKind classifies m, a schema: a plain or settled leaf (see leafKind,
// below the root only), a simple container (and then its keys, see
// simpleContainer), or any other schema.
func (d Dialect) nodeKind(m map[string]any) (kind int, keys uint16) {
	t, _ := m["type"].(string)
	switch t {
	case "string", "integer", "number", "boolean":
		return d.leafKindOf(m, t), 0
	case "object":
		if keys := simpleContainer(m); keys != 0 {
			return kindObject, keys
		}
	case "array":
		if keys := simpleContainer(m); keys&simpleItems != 0 { // else addItems adds them
			return kindArray, keys
		}
	}
	return kindOther, 0
}

// simpleContainer reports whether m, of type "object" or "array", has
// only properties (a map of schemas), required (any value), items (one
// schema), additionalProperties (a schema or a boolean), annotations and
// item counts, and whether it has items. Of the passes of node before
// children, none changes such a node (an array only with its items) or
// reports anything: no reference, allOf, union, type list, nullable or
// const to reshape, every subschema keyword of the shape it needs, not a
// tuple, its type its own. node goes from there straight to children.
// Every pass from children on still runs. The test is narrow on purpose.
func simpleContainer(m map[string]any) (keys uint16) {
	for k, v := range m {
		switch k {
		case "type":
			keys |= 1 << 11
		case "required":
			keys |= 1 << 9
		case "description":
			keys |= 1 << 4
		case "title":
			keys |= 1 << 10
		case "$comment":
			keys |= 1 << 0
		case "$schema":
			keys |= 1 << 1
		case "default":
			keys |= 1 << 3
		case "minItems":
			keys |= 1 << 7
		case "maxItems":
			keys |= 1 << 6
		case "properties", "items":
			if _, ok := v.(map[string]any); !ok {
				return 0
			}
			if k == "items" {
				keys |= simpleItems
			} else {
				keys |= simpleProperties
			}
		case "additionalProperties":
			switch v.(type) {
			case map[string]any, bool:
			default:
				return 0
			}
			keys |= simpleAdditional
		default:
			return 0
		}
	}
	return keys
}

// simpleKeys are the keywords simpleContainer takes, sorted: bit i of
// the set it returns stands for simpleKeys[i].
var simpleKeys = [...]string{"$comment", "$schema", "additionalProperties", "default", "description", "items", "maxItems", "minItems", "properties", "required", "title", "type"}

// Bits of simpleContainer's set: a container's subschema keywords.
const (
	simpleAdditional = 1 << 2
	simpleItems      = 1 << 5
	simpleProperties = 1 << 8
)

// simplePresent returns present(m) of a simple container whose keys are
// keys (see simpleContainer), without reading m.
func simplePresent(keys uint16) (mask uint32) {
	if keys&simpleItems != 0 {
		mask |= 1 << 0 // keywordClass("items")
	}
	if keys&simpleAdditional != 0 {
		mask |= 1 << 1 // keywordClass("additionalProperties")
	}
	if keys&simpleProperties != 0 {
		mask |= 1 << 12 // keywordClass("properties")
	}
	return mask
}

// leafKind classifies m, a schema below the root. plain: a string,
// number, integer or boolean with only annotations, bounds, a pattern, a
// format (a string) and an enum, so that of the passes of node only those
// from strip on can change it (see plainLeaf). settled: a plain leaf with
// only keywords the dialect takes as they are (a format it takes on that
// type; an enum it keeps), which every pass would leave unchanged,
// reporting nothing: node shares it. Most properties of real tools are
// settled leaves. The test is narrow on purpose: anything else goes
// through every pass.
func (d Dialect) leafKind(m map[string]any) (plain, settled bool) {
	t, _ := m["type"].(string)
	switch t {
	case "string", "integer", "number", "boolean":
	default:
		return false, false
	}
	k := d.leafKindOf(m, t)
	return k >= kindPlain, k == kindSettled
}

// leafKindOf is leafKind of m, whose type is t, a string, number, integer
// or boolean: kindPlain, kindSettled or kindOther. It looks up the
// keywords of a plain leaf, the most frequent first, until it has found
// as many as m has keys: most leaves have one or two keys, found in one or
// two lookups, where going through the map's keys starts an iteration
// (a random start, and while the collector marks, a write barrier at each
// step).
func (d Dialect) leafKindOf(m map[string]any, t string) int {
	if !d.Accepts("type") {
		return kindOther
	}
	settled := true
	found := 1 // the type
	for _, k := range leafKeywords {
		if found == len(m) {
			break
		}
		v, ok := m[k]
		if !ok {
			continue
		}
		found++
		i := keywordIndex(k)
		switch i {
		case formatIndex: // strip keeps a format the dialect takes on this type
			f, ok := v.(string)
			if !ok {
				return kindOther
			}
			if !d.acceptsFormat(f, t) {
				settled = false
			}
		case enumIndex: // enums keeps a non-empty list: any values, or strings on a string
			list, ok := v.([]any)
			if !ok || len(list) == 0 || d.stringEnums && (t != "string" || !allStrings(list)) {
				settled = false
			}
		}
		if settled && !d.acceptsIndexed(i, k) {
			settled = false
		}
	}
	if found < len(m) { // a keyword no plain leaf has
		return kindOther
	}
	if settled {
		return kindSettled
	}
	return kindPlain
}

// plainLeaf compiles n, a copy of a plain leaf (see leafKind), with the
// passes of node that can change it, from strip on. Before strip every
// pass leaves such a leaf as it is: no reference, union, allOf, type list
// or nullable to reshape, no subschema, no const, not an array or object;
// after it, a leaf keeps its type (the dialect takes "type"), so typed,
// typedStrict and strictNode find it typed, and required finds no
// "required".
func (c *compiler) plainLeaf(n *nodeState) map[string]any {
	n.valued = hasKey(n.m, "enum")
	c.strip(n)
	c.enums(n)
	c.sayNullable(n) // enums may have made it nullable
	c.describe(n)
	return n.m
}

// leafKeywords are the keywords a plain leaf may have (see leafKind)
// beside "type", the most frequent in the corpus first.
var leafKeywords = [...]string{"description", "enum", "default", "maximum", "minimum", "maxLength", "minLength", "format",
	"exclusiveMinimum", "pattern", "title", "multipleOf", "examples", "deprecated", "exclusiveMaximum", "example", "readOnly", "writeOnly", "$comment"}

var (
	formatIndex = keywordIndex("format")
	enumIndex   = keywordIndex("enum")
)

func allStrings(list []any) bool {
	for _, v := range list {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

// place is where a node sits: below its parent's keyword key, and there
// under the property name (a map of schemas) or at index i (a list). The
// compiler keeps a stack of them, root to current node. Most nodes are
// compiled without a change to report, so a place's path is built, once,
// only when one is (see compiler.pathAt).
type place struct {
	key   string
	name  string
	named bool // name is set: key holds a map of schemas
	i     int  // the index in a list of schemas, or -1
	path  string
	built bool // path is set
}

// nodeAt compiles v at place p below the current node.
func (c *compiler) nodeAt(v any, p place, depth int) any {
	c.places = append(c.places, p)
	out := c.node(v, depth)
	if c.d.strict {
		c.bounds.levels = max(c.bounds.levels, len(c.places))
		c.tally(out)
	}
	c.places = c.places[:len(c.places)-1]
	return out
}

// below returns the place below keyword key of the current node.
func below(key string) place { return place{key: key, i: -1} }

// pathAt returns the dotted path of the node at level on the stack of
// places, "" for the root.
func (c *compiler) pathAt(level int) string {
	if level == 0 {
		return ""
	}
	p := &c.places[level-1]
	if !p.built {
		parent := c.pathAt(level - 1)
		var s string
		switch {
		case p.named && parent != "" && isIdent(p.key) && isIdent(p.name):
			// child(child(parent, key), name) in one allocation: most
			// places are a property's, "….properties.name".
			s = parent + "." + p.key + "." + p.name
		case p.named:
			s = child(child(parent, p.key), p.name)
		case p.i >= 0:
			s = index(child(parent, p.key), p.i)
		default:
			s = child(parent, p.key)
		}
		p.path, p.built = s, true
	}
	return p.path
}

// path returns the node's dotted path, "" at the root.
func (n *nodeState) path(c *compiler) string {
	if n.level < 0 {
		return n.pathStr
	}
	return c.pathAt(n.level)
}

// isRoot reports whether n is the root of the schema.
func (n *nodeState) isRoot() bool { return n.level == 0 }

// leaf reports whether a schema has nothing inside to compile: no
// subschemas and no reference.
func leaf(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	for k, e := range m {
		switch x := e.(type) {
		case map[string]any:
			if len(x) > 0 && k != "default" && k != "const" {
				return false
			}
		case []any:
			if len(x) > 0 && slices.Contains(schemaListKeywords, k) || k == "items" {
				return false
			}
		}
		if k == "$ref" {
			return false
		}
	}
	return true
}

// reshape does one round of the rewrites that may expose more of them:
// references, allOf, type arrays, "nullable", unions. It reports whether it
// changed anything.
func (c *compiler) reshape(n *nodeState) bool {
	changed := c.reference(n)
	c.validTypes(n)
	if n.cut {
		return false
	}
	if raw, ok := n.m["allOf"]; ok && !c.d.Accepts("allOf") {
		delete(n.m, "allOf")
		path := child(n.path(c), "allOf")
		alts := c.alternatives(raw, path, false)
		for _, alt := range alts {
			intersect(n.m, alt)
		}
		c.change(path, fmt.Sprintf("%d schemas merged into one", len(alts)), c.rejects("allOf"))
		changed = true
	}
	if c.typeArray(n) {
		changed = true
	}
	if v, ok := n.m["nullable"]; ok && !c.d.Accepts("nullable") {
		delete(n.m, "nullable")
		if v == true {
			n.nullable = true
			c.change(child(n.path(c), "nullable"), "rewritten in "+c.d.name+"'s way to allow null", c.rejects("nullable"))
		} else {
			c.change(child(n.path(c), "nullable"), "removed", c.rejects("nullable"))
		}
		changed = true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if c.union(n, k) {
			changed = true
		}
	}
	return changed
}

// reference inlines n's reference where the dialect does not keep it, and
// reports whether it changed n.
func (c *compiler) reference(n *nodeState) bool {
	ref, ok := n.m["$ref"]
	if !ok {
		return false
	}
	s, isString := ref.(string)
	if isString {
		if kept, ok := c.keptRef(s); ok {
			if kept != s {
				n.m["$ref"] = kept
				c.change(child(n.path(c), "$ref"), "reference "+s+" rewritten as "+kept, c.rejects("definitions"))
			}
			return false
		}
	}
	delete(n.m, "$ref")
	path := child(n.path(c), "$ref")
	target, key, err := c.resolve(s)
	if err != nil {
		c.change(path, err.Error(), "providers do not follow remote or unknown references")
		return true
	}
	if slices.Contains(c.inline, key) {
		c.cutCycle(n, s, target)
		return true
	}
	c.inline = append(c.inline, key)
	c.used[key] = true
	overlay(n.m, target)
	c.change(path, "reference "+s+" inlined", c.rejects("$ref"))
	return true
}

// cutCycle replaces n, a recursive reference, by a typed placeholder.
func (c *compiler) cutCycle(n *nodeState, ref string, target map[string]any) {
	desc, _ := n.m["description"].(string)
	if desc == "" {
		desc, _ = target["description"].(string)
	}
	t := kindOf(target)
	if t == "" {
		t = "object"
	}
	n.m = map[string]any{"type": t}
	n.hints = append(n.hints, fmt.Sprintf("recursive: the same shape as %s again; its inner levels are not described here", ref))
	if desc != "" {
		n.m["description"] = desc
	}
	n.cut = true
	c.change(n.path(c), "recursive reference "+ref+" cut here with a placeholder of type "+t, c.rejects("$ref"))
}

// placeholder is a typed stand-in for a schema the compiler does not
// describe further.
func (c *compiler) placeholder(v any, why string) map[string]any {
	out := map[string]any{}
	if m, ok := v.(map[string]any); ok {
		if t := kindOf(m); t != "" {
			out["type"] = t
		}
		if d, ok := m["description"].(string); ok {
			out["description"] = d
		}
	}
	if _, ok := out["type"]; !ok && (c.d.typed || c.d.strict) {
		out["type"] = "object"
	}
	addHint(out, why)
	if c.d.strict && out["type"] == "object" {
		out["properties"] = map[string]any{}
		out["required"] = []any{}
		out["additionalProperties"] = false
	}
	n := &nodeState{m: out}
	n.hints, _ = out[hintKey].([]string)
	delete(out, hintKey)
	c.describe(n)
	return n.m
}

// jsonTypes are the type names of JSON Schema.
var jsonTypes = []string{"null", "boolean", "integer", "number", "string", "array", "object"}

// validTypes removes type names JSON Schema does not know.
func (c *compiler) validTypes(n *nodeState) {
	raw, ok := n.m["type"]
	if !ok {
		return
	}
	switch t := raw.(type) {
	case string:
		if slices.Contains(jsonTypes, t) {
			return
		}
		delete(n.m, "type")
	case []any:
		var keep []any
		for _, e := range t {
			if s, ok := e.(string); ok && slices.Contains(jsonTypes, s) && !slices.Contains(keep, e) {
				keep = append(keep, e)
			}
		}
		if len(keep) == len(t) {
			return
		}
		if len(keep) == 0 {
			delete(n.m, "type")
		} else {
			n.m["type"] = keep
		}
	default:
		delete(n.m, "type")
	}
	c.change(child(n.path(c), "type"), "invalid type "+literal(raw)+" removed", "providers refuse unknown type names")
}

// typeArray rewrites "type": [...] where the dialect does not accept type
// arrays, and reports whether it did.
func (c *compiler) typeArray(n *nodeState) bool {
	list, ok := n.m["type"].([]any)
	if !ok || c.d.typeArrays {
		return false
	}
	path := child(n.path(c), "type")
	var types []string
	for _, t := range list {
		s, ok := t.(string)
		switch {
		case !ok:
		case s == "null":
			n.nullable = true
		case !slices.Contains(types, s):
			types = append(types, s)
		}
	}
	problem := c.d.name + " does not accept type arrays"
	switch {
	case len(types) == 0:
		delete(n.m, "type")
		c.change(path, "type "+literal(list)+" removed", problem)
	case len(types) == 1:
		n.m["type"] = types[0]
		c.change(path, fmt.Sprintf("type %s rewritten as %q%s", literal(list), types[0], nullableNote(n.nullable)), problem)
	case c.d.unions():
		delete(n.m, "type")
		alts := make([]any, len(types))
		for i, t := range types {
			alts[i] = map[string]any{"type": t}
		}
		addAlternatives(n.m, alts)
		c.change(path, "type "+literal(list)+" rewritten as anyOf"+nullableNote(n.nullable), problem)
	default:
		n.m["type"] = types[0]
		n.hints = append(n.hints, "or "+strings.Join(types[1:], " or "))
		c.change(path, fmt.Sprintf("type %s rewritten as %q, the other types moved to description%s", literal(list), types[0], nullableNote(n.nullable)), problem)
	}
	return true
}

// addAlternatives adds alternatives to a node's anyOf; when it already has
// one, the two must both hold, so the new one goes into allOf.
func addAlternatives(m map[string]any, alts []any) {
	if _, ok := m["anyOf"]; !ok {
		m["anyOf"] = alts
		return
	}
	all, _ := m["allOf"].([]any)
	m["allOf"] = append(all, map[string]any{"anyOf": alts})
}

func nullableNote(nullable bool) string {
	if nullable {
		return ", nullable"
	}
	return ""
}

// union simplifies or merges n's anyOf or oneOf as the dialect needs, and
// reports whether it changed n.
func (c *compiler) union(n *nodeState, key string) bool {
	raw, ok := n.m[key]
	if !ok {
		return false
	}
	path := child(n.path(c), key)
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		delete(n.m, key)
		c.change(path, "removed: not a non-empty array of schemas", "invalid "+key)
		return true
	}
	keep := c.d.unions()
	// Where the dialect says nullable with a null alternative, a union with
	// one is already in its simplest form.
	nullStyle := c.d.typeArrays || c.d.nullableKeyword()
	if keep && !c.d.simplify {
		return c.renameOneOf(n, key, path)
	}
	var rest []any
	restAt := -1 // index of the last alternative that is not null
	for i, a := range list {
		if !isNullSchema(a) {
			rest = append(rest, a)
			restAt = i
		}
	}
	nulls := len(list) - len(rest)
	if keep && nulls > 0 && !nullStyle {
		return c.renameOneOf(n, key, path)
	}
	if vals, typ, hints, ok := literals(rest); ok {
		delete(n.m, key)
		lit := map[string]any{"enum": vals}
		if typ != "" {
			lit["type"] = typ
		}
		intersect(n.m, lit)
		n.hints = append(n.hints, hints...)
		n.nullable = n.nullable || nulls > 0
		c.change(path, fmt.Sprintf("%d literal alternatives rewritten as one enum%s", len(rest), nullableNote(nulls > 0)), c.unionProblem(key, keep))
		return true
	}
	if len(rest) == 1 && (!keep || simpleType(rest[0])) {
		delete(n.m, key)
		for _, alt := range c.alternatives(rest, index(path, restAt), false) {
			intersect(n.m, alt)
		}
		c.movePaths(index(path, restAt), n.path(c))
		n.nullable = n.nullable || nulls > 0
		c.change(path, "single alternative inlined"+nullableNote(nulls > 0), c.unionProblem(key, keep))
		return true
	}
	if keep {
		return c.renameOneOf(n, key, path)
	}
	delete(n.m, key)
	alts := c.alternatives(rest, path, true)
	merged, described := c.mergeUnion(alts, key == "oneOf")
	intersect(n.m, merged)
	n.nullable = n.nullable || nulls > 0
	action := fmt.Sprintf("%d alternatives merged into one schema%s", len(alts), nullableNote(nulls > 0))
	if described > 0 {
		action += fmt.Sprintf("; %d of another type moved to description", described)
	}
	c.change(path, action, c.unionProblem(key, keep))
	return true
}

// movePaths rewrites the report's paths below from, a schema that was
// inlined into its parent, to be below to.
func (c *compiler) movePaths(from, to string) {
	move := func(list []Change) {
		for i, ch := range list {
			if rest, ok := strings.CutPrefix(ch.Path, from); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				list[i].Path = joinPath(to, strings.TrimPrefix(rest, "."))
			}
		}
	}
	move(c.rep.Changes)
	move(c.rep.NotStrict)
}

func (c *compiler) unionProblem(key string, keep bool) string {
	if keep {
		return ""
	}
	return c.rejects(key)
}

// renameOneOf rewrites oneOf as anyOf where the dialect keeps only anyOf.
// Exactly-one is still checked locally. It reports whether it changed n.
func (c *compiler) renameOneOf(n *nodeState, key, path string) bool {
	if key != "oneOf" || c.d.Accepts("oneOf") {
		return false
	}
	alts, _ := n.m[key].([]any)
	delete(n.m, key)
	addAlternatives(n.m, alts)
	c.change(path, "rewritten as anyOf (exactly one is still enforced when a call is checked)", c.rejects("oneOf"))
	return true
}

// simpleType reports whether a schema has a plain type, so that null can
// be added to it without wrapping it.
func simpleType(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ref := m["$ref"]
	_, any1 := m["anyOf"]
	_, one := m["oneOf"]
	_, all := m["allOf"]
	ok = len(typeSet(m["type"])) > 0
	return ok && !ref && !any1 && !one && !all
}

// isNullSchema reports whether a union alternative only allows null.
func isNullSchema(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if t, ok := m["type"].(string); ok && t == "null" {
		return true
	}
	if c, ok := m["const"]; ok && c == nil {
		return true
	}
	if e, ok := m["enum"].([]any); ok && len(e) == 1 && e[0] == nil {
		return true
	}
	return false
}

// alternatives returns the schemas of an allOf, anyOf or oneOf with their
// top-level references resolved. Nested unions are flattened when flatten
// is set (for anyOf and oneOf).
func (c *compiler) alternatives(raw any, path string, flatten bool) []map[string]any {
	list, ok := raw.([]any)
	if !ok {
		c.change(path, "removed: not an array of schemas", "invalid keyword value")
		return nil
	}
	var out []map[string]any
	for i, v := range list {
		p := index(path, i)
		switch x := v.(type) {
		case bool:
			if x {
				out = append(out, map[string]any{})
			} else if !flatten {
				out = append(out, map[string]any{hintKey: []string{"no value is allowed here"}})
			}
			continue
		case map[string]any:
			m := c.resolveTop(x, p)
			if flatten && len(out) < maxNodes && pureUnion(m) {
				for _, k := range []string{"anyOf", "oneOf"} {
					if inner, ok := m[k]; ok {
						out = append(out, c.alternatives(inner, child(p, k), true)...)
					}
				}
				continue
			}
			out = append(out, m)
		default:
			c.change(p, "not a schema ("+valueType(v)+"); ignored", "invalid alternative")
		}
	}
	return out
}

// pureUnion reports whether a schema is only a union, with nothing else
// but annotations.
func pureUnion(m map[string]any) bool {
	found := false
	for k := range m {
		switch k {
		case "anyOf", "oneOf":
			found = true
		case "description", "title", "$comment":
		default:
			return false
		}
	}
	return found
}

// resolveTop follows a chain of references at the top of m and returns the
// schema it ends in, the references' siblings overlaid. The references
// stay on the inline stack until the current node is done.
func (c *compiler) resolveTop(m map[string]any, path string) map[string]any {
	out := maps.Clone(m)
	for round := 0; round < maxRounds; round++ {
		ref, ok := out["$ref"]
		if !ok {
			return out
		}
		s, _ := ref.(string)
		delete(out, "$ref")
		target, key, err := c.resolve(s)
		if err != nil {
			c.change(child(path, "$ref"), err.Error(), "providers do not follow remote or unknown references")
			return out
		}
		if slices.Contains(c.inline, key) {
			n := &nodeState{m: out, level: -1, pathStr: path}
			c.cutCycle(n, s, target)
			n.m[hintKey] = n.hints
			return n.m
		}
		c.inline = append(c.inline, key)
		c.used[key] = true
		overlay(out, target)
	}
	return out
}

// constToEnum rewrites const as a one-value enum where const is not
// accepted.
func (c *compiler) constToEnum(n *nodeState) {
	v, ok := n.m["const"]
	if !ok || c.d.Accepts("const") {
		return
	}
	delete(n.m, "const")
	intersect(n.m, map[string]any{"enum": []any{v}})
	c.change(child(n.path(c), "const"), "rewritten as a one-value enum", c.rejects("const"))
}

// tuples rewrites tuple arrays ("prefixItems", or "items" as an array)
// where the dialect cannot take them: items becomes the union of the
// positions, and the positions are described.
func (c *compiler) tuples(n *nodeState) {
	arrayItems, isTuple := n.m["items"].([]any)
	prefix, hasPrefix := n.m["prefixItems"].([]any)
	if c.d.accept == nil || !isTuple && !hasPrefix {
		return
	}
	if !isTuple && c.d.Accepts("prefixItems") {
		return
	}
	positions := prefix
	rest, hasRest := n.m["items"], !isTuple
	if isTuple {
		positions = arrayItems
		rest, hasRest = n.m["additionalItems"]
	}
	path := n.path(c)
	if c.d.Accepts("prefixItems") { // draft-07 tuple to prefixItems
		n.m["prefixItems"] = positions
		delete(n.m, "items")
		delete(n.m, "additionalItems")
		if hasRest {
			n.m["items"] = rest
		}
		c.change(child(path, "items"), "tuple rewritten as prefixItems", c.d.name+" does not accept an array as items")
		return
	}
	var desc []string
	var alts []any
	add := func(s any) {
		if !slices.ContainsFunc(alts, func(a any) bool { return equal(a, s) }) {
			alts = append(alts, s)
		}
	}
	for i, p := range positions {
		add(p)
		desc = append(desc, fmt.Sprintf("item %d: %s", i+1, c.compact(p, 1)))
	}
	switch {
	case hasRest && rest == false:
		desc = append(desc, fmt.Sprintf("at most %d items", len(positions)))
	case hasRest && rest != true:
		add(rest)
		desc = append(desc, "further items: "+c.compact(rest, 1))
	}
	delete(n.m, "prefixItems")
	delete(n.m, "additionalItems")
	if len(alts) == 0 {
		delete(n.m, "items")
	} else {
		n.m["items"] = map[string]any{"anyOf": alts}
	}
	n.hints = append(n.hints, "tuple: "+strings.Join(desc, ", "))
	key := "prefixItems"
	if isTuple {
		key = "items"
	}
	c.change(child(path, key), "tuple rewritten as items that may be any of its positions; positions moved to description", c.rejects("prefixItems"))
}

// addItems gives an array without items an items schema that accepts any
// value, where the dialect needs one.
func (c *compiler) addItems(n *nodeState, inferred string) {
	if !c.d.items || !hasType(n.m, "array") && inferred != "array" {
		return
	}
	if _, ok := n.m["items"]; ok {
		return
	}
	if _, ok := n.m["prefixItems"]; ok && c.d.Accepts("prefixItems") {
		return
	}
	n.m["items"] = map[string]any{}
	c.change(child(n.path(c), "items"), "items added (any value)", c.d.name+" needs items on every array")
}

// hasType reports whether a schema's type is t or a list containing t.
func hasType(m map[string]any, t string) bool {
	switch x := m["type"].(type) {
	case string:
		return x == t
	case []any:
		return slices.Contains(x, any(t))
	}
	return false
}

// isOpen reports whether an object schema takes keys beyond its declared
// properties. nested is false at the root, where no properties means no
// arguments rather than any object.
func isOpen(m map[string]any, nested bool) bool {
	if !hasType(m, "object") && m["properties"] == nil {
		return false
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok && len(pp) > 0 {
		return true
	}
	ap, hasAP := m["additionalProperties"]
	if hasAP {
		return ap != false
	}
	props, _ := m["properties"].(map[string]any)
	return nested && len(props) == 0
}

// subschemaKeywords hold one schema; schemaMapKeywords a map of them;
// schemaListKeywords a list.
var (
	subschemaKeywords  = []string{"items", "additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
	schemaListKeywords = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
)

// keywordClass tells the subschema keywords apart: classSub for one schema,
// classMap for a map of them, classList for a list; 0 for any other key.
// keywordBit is the keyword's bit in a node's presence mask (see present).
func keywordClass(k string) (class, bit int) {
	switch k {
	case "items":
		return classSub, 0
	case "additionalProperties":
		return classSub, 1
	case "additionalItems":
		return classSub, 2
	case "contains":
		return classSub, 3
	case "propertyNames":
		return classSub, 4
	case "not":
		return classSub, 5
	case "if":
		return classSub, 6
	case "then":
		return classSub, 7
	case "else":
		return classSub, 8
	case "unevaluatedItems":
		return classSub, 9
	case "unevaluatedProperties":
		return classSub, 10
	case "contentSchema":
		return classSub, 11
	case "properties":
		return classMap, 12
	case "patternProperties":
		return classMap, 13
	case "dependentSchemas":
		return classMap, 14
	case "$defs":
		return classMap, 15
	case "definitions":
		return classMap, 16
	case "anyOf":
		return classList, 17
	case "oneOf":
		return classList, 18
	case "allOf":
		return classList, 19
	case "prefixItems":
		return classList, 20
	}
	return 0, -1
}

const (
	classSub = iota + 1
	classMap
	classList
)

// present returns the presence mask of m's subschema keywords: bit
// keywordClass(k) is set for each one m holds. One pass over a node's few
// keys is cheaper than looking up all 21 keywords.
func present(m map[string]any) uint32 {
	var mask uint32
	for k := range m {
		if _, bit := keywordClass(k); bit >= 0 {
			mask |= 1 << bit
		}
	}
	return mask
}

// children compiles the subschemas of the keywords the dialect keeps, in
// the order of subschemaKeywords, schemaMapKeywords, schemaListKeywords.
func (c *compiler) children(n *nodeState, depth int) {
	if n.isRoot() {
		c.moveDefinitions(n)
	}
	var mask uint32
	if n.simple {
		mask = simplePresent(n.keys)
	} else {
		mask = present(n.m)
	}
	if mask == 0 {
		return
	}
	bit := 0
	for _, k := range subschemaKeywords {
		bit++
		if mask&(1<<(bit-1)) == 0 {
			continue
		}
		switch x := n.m[k].(type) {
		case map[string]any:
			if c.d.Accepts(k) {
				n.m[k] = c.nodeAt(x, below(k), depth+1)
			}
		case bool:
			if k == "items" && !c.d.booleans() {
				n.m[k] = c.nodeAt(x, below(k), depth+1)
			}
		case []any: // items as a tuple, kept as it is
			out := make([]any, len(x))
			for i, s := range x {
				at := below(k)
				at.i = i
				out[i] = c.nodeAt(s, at, depth+1)
			}
			n.m[k] = out
		}
	}
	for _, k := range schemaMapKeywords {
		bit++
		if mask&(1<<(bit-1)) == 0 {
			continue
		}
		v, ok := n.m[k].(map[string]any)
		if !ok || !c.d.Accepts(k) {
			continue
		}
		out := make(map[string]any, len(v))
		start, end := c.pushNames(v)
		for i := start; i < end; i++ {
			// By index: the nested calls may grow c.names.
			j := c.byName[i]
			name, src := c.names[j].name, c.names[j].src
			at := below(k)
			at.name, at.named = name, true
			if k == "properties" && src == false && !c.d.booleans() {
				n.hints = append(n.hints, fmt.Sprintf("%q must not be set", name))
				c.change(child(child(n.path(c), k), name), "removed: the property must not be set (said in the description)", c.d.name+" does not accept boolean schemas")
				c.names[j].removed = true
				continue
			}
			compiled := c.nodeAt(src, at, depth+1)
			out[name] = compiled
			c.names[j].out = compiled
		}
		n.m[k] = out
		if k != "properties" {
			c.popNames(start)
			continue
		}
		if n.propNames { // cannot happen: one "properties" per node
			c.popNames(n.namesAt)
		}
		n.ownProps = true
		n.propNames, n.namesAt, n.namesEnd, n.outProps = true, start, end, out
	}
	for _, k := range schemaListKeywords {
		bit++
		if mask&(1<<(bit-1)) == 0 {
			continue
		}
		v, ok := n.m[k].([]any)
		if !ok || !c.d.Accepts(k) {
			continue
		}
		out := make([]any, len(v))
		for i, s := range v {
			at := below(k)
			at.i = i
			out[i] = c.nodeAt(s, at, depth+1)
		}
		n.m[k] = out
	}
}

// pushNames pushes the keys of m with their values on c.names, a stack
// shared by the nested calls rather than a slice of their own for each
// map, and their order by name on c.byName: c.names[c.byName[i]] for i
// in [start, end) are the names in order until popNames(start). The
// values come with the names: no lookup of each. The order is sorted as
// indices, not entries, which are seven words with pointers.
func (c *compiler) pushNames(m map[string]any) (start, end int) {
	start = len(c.names)
	for name, v := range m {
		c.byName = append(c.byName, int32(len(c.names)))
		c.names = append(c.names, nameEntry{name: name, src: v})
	}
	end = len(c.names)
	order, names := c.byName[start:end], c.names
	if len(order) <= 12 {
		for i := 1; i < len(order); i++ { // insertion sort, as slices.Sort does below 12
			x := order[i]
			j := i
			for ; j > 0 && names[x].name < names[order[j-1]].name; j-- {
				order[j] = order[j-1]
			}
			order[j] = x
		}
	} else {
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(names[a].name, names[b].name) })
	}
	return start, end
}

// nameEntry is a name of a map of schemas on the compiler's stack (see
// pushNames): its schema as given, and (for properties) what children
// compiled of it, or that children removed it.
type nameEntry struct {
	name    string
	src     any
	out     any
	removed bool
}

// popNames pops the names pushNames pushed from start.
func (c *compiler) popNames(start int) {
	clear(c.names[start:])
	c.names, c.byName = c.names[:start], c.byName[:start]
}

// shapes removes subschema keywords whose value is not a schema, a map of
// schemas or a list of them, as the keyword needs.
func (c *compiler) shapes(n *nodeState) {
	var bad []string
	for k, v := range n.m {
		var ok bool
		switch class, _ := keywordClass(k); class {
		case classSub:
			switch v.(type) {
			case map[string]any, bool:
				ok = true
			case []any:
				ok = k == "items"
			}
		case classMap:
			_, ok = v.(map[string]any)
		case classList:
			_, ok = v.([]any)
		default:
			continue
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	for _, k := range bad {
		if k == "properties" {
			n.m[k] = map[string]any{}
			c.change(child(n.path(c), k), "not an object; replaced by {}", "\"properties\" must be an object")
			continue
		}
		delete(n.m, k)
		c.change(child(n.path(c), k), "removed: not a valid value for "+k, "invalid "+k)
	}
}

// strip removes the keywords the dialect does not accept and describes the
// constraints among them.
func (c *compiler) strip(n *nodeState) {
	var buf [8]string
	removed := buf[:0]
	if n.simple {
		// Its keys as simpleContainer saw them, sorted: no format.
		for i, k := range simpleKeys {
			if n.keys&(1<<i) != 0 && !c.d.Accepts(k) {
				removed = append(removed, k)
			}
		}
	} else {
		for k, v := range n.m {
			if k == hintKey {
				continue
			}
			if !c.d.Accepts(k) {
				removed = append(removed, k)
				continue
			}
			if f, ok := v.(string); ok && k == "format" && !c.d.acceptsFormat(f, kindOf(n.m)) {
				removed = append(removed, k)
			}
		}
		slices.Sort(removed)
	}
	if len(removed) == 0 {
		return
	}
	var described []string
	before := len(n.hints)
	n.hints, described = c.describeKeywords(n.m, removed, 0, n.hints)
	for _, k := range removed {
		path := child(n.path(c), k)
		problem := c.rejects(k)
		if k == "format" && problem == "" {
			problem = fmt.Sprintf("%s does not accept \"format\": %s", c.d.name, literal(n.m[k]))
		}
		action := "removed"
		switch {
		case k == "default" && slices.Contains(described, k) && saysDefault(n.m, n.hints[before:]):
			action = "removed: the description already gives it"
		case slices.Contains(described, k):
			action = "moved to description"
		case k == "title":
			if d, _ := n.m["description"].(string); d == "" {
				if t, ok := n.m["title"].(string); ok && t != "" {
					n.m["description"] = t
					action = "moved to description"
				}
			}
		case k == "$defs" || k == "definitions":
			action = "removed: references to it are inlined"
		case k == "additionalProperties" && n.m[k] == false:
			action = "removed (unknown keys are still refused when a call is checked)"
		}
		c.change(path, action, problem)
		delete(n.m, k)
	}
}

// saysDefault reports whether m's description already gives the hint
// "default: …" among hints, those describeKeywords just added for m's
// default (no other rule writes a hint that starts so): that hint is
// "default: "+literal(m["default"]), not built again here.
func saysDefault(m map[string]any, hints []string) bool {
	desc, _ := m["description"].(string)
	for _, h := range hints {
		if strings.HasPrefix(h, "default: ") {
			return saysAlready(desc, h)
		}
	}
	return saysAlready(desc, "default: "+literal(m["default"]))
}

// list returns the array value of keyword k; a value that is not an array
// is removed and reported.
func (c *compiler) list(n *nodeState, k string) ([]any, bool) {
	raw, ok := n.m[k]
	if !ok {
		return nil, false
	}
	list, ok := raw.([]any)
	if !ok {
		delete(n.m, k)
		c.change(child(n.path(c), k), "removed: not an array", "invalid "+k)
	}
	return list, ok
}

// enums makes enums fit a dialect that takes only string enums: null goes
// into nullable, and an enum of other values into the description.
func (c *compiler) enums(n *nodeState) {
	list, ok := c.list(n, "enum")
	if !ok {
		return
	}
	if len(list) == 0 {
		delete(n.m, "enum")
		n.hints = append(n.hints, "no value is allowed here")
		c.change(child(n.path(c), "enum"), "empty enum moved to description", "providers refuse an empty enum")
		return
	}
	if !c.d.stringEnums {
		return
	}
	var strs []any
	null, other := false, false
	for _, v := range list {
		switch v.(type) {
		case nil:
			null = true
		case string:
			strs = append(strs, v)
		default:
			other = true
		}
	}
	if other || len(strs) == 0 {
		delete(n.m, "enum")
		if len(list) > 0 {
			n.hints = append(n.hints, "one of: "+literalList(list))
		}
		c.change(child(n.path(c), "enum"), "moved to description", c.d.name+" accepts only enums of strings")
		return
	}
	if null {
		n.m["enum"] = strs
		n.nullable = true
		c.change(child(n.path(c), "enum"), "null moved out of the enum: the value is nullable", c.d.name+" accepts only enums of strings")
	}
	if t, _ := n.m["type"].(string); t != "string" {
		n.m["type"] = "string"
		c.change(child(n.path(c), "type"), `"type": "string" set on an enum of strings`, c.d.name+" needs \"type\": \"string\" on an enum")
	}
}

// typed gives a node without a type the type its keywords imply, where the
// dialect needs one.
func (c *compiler) typed(n *nodeState, inferred string) {
	if !c.d.typed {
		return
	}
	if _, ok := n.m["type"]; ok {
		return
	}
	for _, k := range []string{"anyOf", "oneOf", "$ref"} {
		if _, ok := n.m[k]; ok {
			return
		}
	}
	problem := c.d.name + " needs a type on every schema"
	if inferred == "" {
		n.m["type"] = "string"
		if !n.valued {
			n.hints = append(n.hints, "any JSON value")
		}
		c.change(child(n.path(c), "type"), `"type": "string" set on a schema that accepts any value`, problem)
		return
	}
	n.m["type"] = inferred
	c.change(child(n.path(c), "type"), fmt.Sprintf("%q set, as its keywords imply", inferred), problem)
}

// typedStrict gives a node without a type the type its keywords imply in
// strict mode, which needs one on every schema; a node that could be
// anything is left for strictNode to report.
func (c *compiler) typedStrict(n *nodeState, inferred string) {
	if !c.d.strict || inferred == "" || hasKey(n.m, "type") || hasKey(n.m, "enum") || hasKey(n.m, "const") || hasKey(n.m, "anyOf") || hasKey(n.m, "$ref") {
		return
	}
	n.m["type"] = inferred
	c.change(child(n.path(c), "type"), fmt.Sprintf("%q set, as its keywords imply", inferred), c.d.name+" needs a type on every schema")
}

// required cleans "required": only strings, once each, and where the
// dialect needs it only declared properties.
func (c *compiler) required(n *nodeState) {
	list, ok := c.list(n, "required")
	if !ok {
		return
	}
	props, _ := n.m["properties"].(map[string]any)
	// Until a name is dropped, the names kept are list[:i]: the new list
	// is built only when one is.
	var keep []any
	var undeclared []string
	changed := false
	for i, r := range list {
		s, ok := r.(string)
		if !changed {
			keep = list[:i]
		}
		drop := false
		switch {
		case !ok || containsString(keep, s):
			drop = true
		case c.d.declaredRequired && !hasKey(props, s):
			undeclared = append(undeclared, s)
			drop = true
		}
		switch {
		case drop && !changed:
			keep = append(make([]any, 0, len(list)), keep...)
			changed = true
		case !drop && changed:
			keep = append(keep, r)
		}
	}
	if !changed {
		return
	}
	n.m["required"] = keep
	if len(undeclared) > 0 {
		n.hints = append(n.hints, "also requires "+quoteAll(undeclared))
		c.change(child(n.path(c), "required"), "undeclared names "+quoteAll(undeclared)+" moved to description", c.d.name+" accepts in required only declared properties")
		return
	}
	c.change(child(n.path(c), "required"), "names that are not strings, or repeated, removed", "invalid required")
}

// containsString reports whether list holds the string s.
func containsString(list []any, s string) bool {
	for _, e := range list {
		if t, ok := e.(string); ok && t == s {
			return true
		}
	}
	return false
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// describe appends the node's hints to its description.
func (c *compiler) describe(n *nodeState) {
	if n.fresh { // nothing to look up
	} else if h, ok := n.m[hintKey]; ok {
		if h, ok := h.([]string); ok {
			n.hints = append(n.hints, h...)
		}
		delete(n.m, hintKey)
	}
	if len(n.hints) == 0 {
		return
	}
	d, _ := n.m["description"].(string)
	hints := slices.DeleteFunc(slices.Compact(n.hints), func(h string) bool { return saysAlready(d, h) })
	if len(hints) == 0 {
		return
	}
	text := strings.Join(hints, "; ")
	if strings.TrimSpace(d) != "" {
		text = strings.TrimRight(d, " \n") + " (" + text + ")"
	}
	n.m["description"] = text
}

// saysAlready reports whether the description already gives what a hint
// would add: a default its author wrote as "default 1", "Default: 1",
// "defaults to 1" or "default is 1".
//
// It is a plain search, case-insensitive like the rest of the matching:
// it runs for every hint of every node on every compile, where building a
// regular expression for each was a third of the compiler's time.
func saysAlready(description, hint string) bool {
	v, ok := strings.CutPrefix(hint, "default: ")
	if !ok || description == "" {
		return false
	}
	// The literal may follow "default" directly; a string written without
	// its quotes only after a connector, or "the default name" would count.
	bare := ""
	if u, err := strconv.Unquote(v); err == nil {
		bare = u
	}
	for i := 0; ; {
		j := indexDefault(description[i:])
		if j < 0 {
			return false
		}
		at := i + j
		i = at + len("default")
		if at > 0 && isWordByte(description[at-1]) {
			continue
		}
		rest := description[i:]
		for _, connector := range []string{"", "s to", " is", ":"} {
			after, ok := cutPrefixFold(rest, connector)
			if !ok {
				continue
			}
			if followsSpace(after, v) || (connector != "" && bare != "" && followsSpace(after, bare)) {
				return true
			}
		}
	}
}

// indexDefault returns the index of the first "default" in s in any case,
// or -1. None of its letters has a case variant outside ASCII.
func indexDefault(s string) int {
	for i := 0; i+len("default") <= len(s); i++ {
		if s[i]|0x20 == 'd' && strings.EqualFold(s[i:i+len("default")], "default") {
			return i
		}
	}
	return -1
}

// followsSpace reports whether s is one or more white space characters,
// then lit in any case, then the end of the text, a character that cannot
// continue a value, or a full stop that ends a sentence.
func followsSpace(s, lit string) bool {
	for n := 0; n < len(s) && isSpaceByte(s[n]); n++ {
		rest, ok := cutPrefixFold(s[n+1:], lit)
		if !ok {
			continue
		}
		if rest == "" {
			return true
		}
		switch c := rest[0]; {
		case c == '.':
			if len(rest) == 1 || isSpaceByte(rest[1]) {
				return true
			}
		case c != '-' && !isWordByte(c):
			return true
		}
	}
	return false
}

// cutPrefixFold returns s without prefix, compared under Unicode simple
// case folding, and whether s began with it.
func cutPrefixFold(s, prefix string) (string, bool) {
	for _, pr := range prefix {
		if s == "" {
			return s, false
		}
		sr, size := utf8.DecodeRuneInString(s)
		if sr != pr && !foldEqual(sr, pr) {
			return s, false
		}
		s = s[size:]
	}
	return s, true
}

// foldEqual reports whether two runes are the same under simple folding.
func foldEqual(a, b rune) bool {
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// addHint adds descriptions of constraints to a schema being compiled.
func addHint(m map[string]any, hints ...string) {
	if len(hints) == 0 {
		return
	}
	h, _ := m[hintKey].([]string)
	m[hintKey] = append(h, hints...)
}
