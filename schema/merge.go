package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// intersect merges b into a where both schemas must hold (allOf, a
// reference and its siblings, an inlined alternative). a's annotations win;
// constraints combine (tighter bounds, common types and values, all
// required names); what cannot be combined is described. a is modified; the
// values of a and b are not.
func intersect(a, b map[string]any) {
	for _, k := range sortedKeys(b) {
		bv := b[k]
		if k == hintKey {
			if h, ok := bv.([]string); ok {
				addHint(a, h...)
			}
			continue
		}
		av, ok := a[k]
		if !ok {
			a[k] = bv
			continue
		}
		if equal(av, bv) {
			continue
		}
		switch k {
		case "description":
			a[k] = joinText(av, bv)
		case "title", "default", "examples", "example", "$comment", "$id", "$schema", "$anchor", "deprecated", "readOnly", "writeOnly":
			// a's annotation wins
		case "type":
			if t, ok := intersectTypes(av, bv); ok {
				a[k] = t
			} else {
				addHint(a, "also of type "+literal(bv))
			}
		case "enum":
			if vals := intersectValues(av, bv); len(vals) > 0 {
				a[k] = vals
			} else {
				addHint(a, "also one of: "+literalList(bv))
			}
		case "required":
			a[k] = unionValues(av, bv)
		case "allOf":
			x, _ := av.([]any)
			y, _ := bv.([]any)
			a[k] = append(slices.Clone(x), y...)
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			x, xok := av.(map[string]any)
			y, yok := bv.(map[string]any)
			switch {
			case !yok: // b's is invalid: a's stands
				continue
			case !xok:
				a[k] = y
				continue
			}
			out := maps.Clone(x)
			for name, s := range y {
				if cur, ok := out[name]; ok {
					out[name] = intersectSchemas(cur, s)
				} else {
					out[name] = s
				}
			}
			a[k] = out
		case "items", "additionalProperties", "additionalItems", "propertyNames", "contains", "unevaluatedProperties", "unevaluatedItems":
			a[k] = intersectSchemas(av, bv)
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains":
			if greater(bv, av) {
				a[k] = bv
			}
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains":
			if greater(av, bv) {
				a[k] = bv
			}
		case "uniqueItems":
			a[k] = av == true || bv == true
		default:
			addHint(a, "also "+k+": "+literal(bv))
		}
	}
}

// intersectSchemas returns a schema for values that satisfy both x and y.
func intersectSchemas(x, y any) any {
	if x == false || y == false {
		return false
	}
	if x == true {
		return y
	}
	if y == true {
		return x
	}
	xm, xok := x.(map[string]any)
	ym, yok := y.(map[string]any)
	if !xok || !yok {
		return x
	}
	out := maps.Clone(xm)
	intersect(out, ym)
	return out
}

// joinText joins two descriptions, leaving out one that the other holds.
func joinText(a, b any) any {
	x, _ := a.(string)
	y, _ := b.(string)
	switch {
	case strings.Contains(x, y):
		return x
	case strings.Contains(y, x):
		return y
	}
	return strings.TrimRight(x, " ") + " " + y
}

// typeSet returns the types a "type" value names.
func typeSet(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// intersectTypes returns the types both "type" values allow (an integer is
// a number), as a "type" value.
func intersectTypes(a, b any) (any, bool) {
	x, y := typeSet(a), typeSet(b)
	var out []any
	add := func(t string) {
		if !slices.Contains(out, any(t)) {
			out = append(out, t)
		}
	}
	for _, t := range x {
		switch {
		case slices.Contains(y, t):
			add(t)
		case t == "integer" && slices.Contains(y, "number"):
			add("integer")
		case t == "number" && slices.Contains(y, "integer"):
			add("integer")
		}
	}
	switch len(out) {
	case 0:
		return nil, false
	case 1:
		return out[0], true
	}
	return out, true
}

// intersectValues returns the values of enum a that enum b also lists.
func intersectValues(a, b any) []any {
	x, _ := a.([]any)
	y, _ := b.([]any)
	var out []any
	for _, v := range x {
		if slices.ContainsFunc(y, func(w any) bool { return equal(v, w) }) {
			out = append(out, v)
		}
	}
	return out
}

// unionValues returns the values of a, then those of b that a lacks.
func unionValues(a, b any) []any {
	x, _ := a.([]any)
	y, _ := b.([]any)
	out := slices.Clone(x)
	for _, v := range y {
		if !slices.ContainsFunc(out, func(w any) bool { return equal(v, w) }) {
			out = append(out, v)
		}
	}
	return out
}

// greater reports whether number a is greater than number b.
func greater(a, b any) bool {
	x, ok1 := rat(a)
	y, ok2 := rat(b)
	return ok1 && ok2 && x.Cmp(y) > 0
}

// kindOf returns the type a schema describes: its "type" (the first one
// that is not null), or the type its keywords imply; "" when it could be
// anything.
func kindOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		if t != "null" && slices.Contains(jsonTypes, t) {
			return t
		}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && s != "null" && slices.Contains(jsonTypes, s) {
				return s
			}
		}
	}
	return inferType(m)
}

// Keywords that imply a type.
var (
	objectKeywords = []string{"properties", "additionalProperties", "patternProperties", "required", "propertyNames", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas"}
	arrayKeywords  = []string{"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "additionalItems"}
	stringKeywords = []string{"pattern", "minLength", "maxLength", "contentEncoding", "contentMediaType"}
	numberKeywords = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)

// implies ranks the type keyword k implies: 4 object, 3 array, 2 string,
// 1 number (the order inferType tries them in), 0 none.
func implies(k string) int {
	switch k {
	case "properties", "additionalProperties", "patternProperties", "required", "propertyNames", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas":
		return 4
	case "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "additionalItems":
		return 3
	case "pattern", "minLength", "maxLength", "contentEncoding", "contentMediaType":
		return 2
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		return 1
	}
	return 0
}

// inferType returns the type a schema's keywords imply, or "".
func inferType(m map[string]any) string {
	if t, ok := m["type"].(string); ok && slices.Contains(jsonTypes, t) {
		return t
	}
	// One pass over the node's few keys rather than a lookup of each
	// keyword that implies a type; the first list that has one wins.
	implied := 0
	for k := range m {
		implied = max(implied, implies(k))
	}
	switch implied {
	case 4:
		return "object"
	case 3:
		return "array"
	case 2:
		return "string"
	case 1:
		return "number"
	}
	if c, ok := m["const"]; ok && c != nil {
		return valueType(c)
	}
	if e, ok := m["enum"].([]any); ok {
		return commonType(e)
	}
	return ""
}

// commonType returns the JSON type all values share ("number" for a mix of
// integers and numbers), ignoring nulls; "" when they do not share one.
func commonType(vals []any) string {
	t := ""
	for _, v := range vals {
		vt := valueType(v)
		switch {
		case vt == "null":
		case t == "" || t == vt:
			t = vt
		case t == "integer" && vt == "number", t == "number" && vt == "integer":
			t = "number"
		default:
			return ""
		}
	}
	return t
}

// literals returns the values of a union whose alternatives are all
// literals (a const, or an enum with nothing but annotations around it) of
// one type, the type, and the descriptions of the values.
func literals(alts []any) ([]any, string, []string, bool) {
	if len(alts) < 2 {
		return nil, "", nil, false
	}
	var vals []any
	var notes []string
	for _, a := range alts {
		m, ok := a.(map[string]any)
		if !ok {
			return nil, "", nil, false
		}
		// The const first, then the enum's values: in this order whatever
		// the order of the keys in the map.
		var these, enum []any
		for k, v := range m {
			switch k {
			case "const":
				these = append(these, v)
			case "enum":
				list, ok := v.([]any)
				if !ok || len(list) == 0 {
					return nil, "", nil, false
				}
				enum = list
			case "type", "description", "title", "$comment":
			default:
				return nil, "", nil, false
			}
		}
		these = append(these, enum...)
		if len(these) == 0 || slices.Contains(these, nil) {
			return nil, "", nil, false
		}
		if t, ok := m["type"]; ok {
			if _, ok := intersectTypes(t, commonType(these)); !ok {
				return nil, "", nil, false
			}
		}
		label, _ := m["description"].(string)
		if label == "" {
			label, _ = m["title"].(string)
		}
		if label != "" && len(these) == 1 {
			notes = append(notes, literal(these[0])+": "+label)
		}
		vals = unionValues(vals, these)
	}
	t := commonType(vals)
	if t == "" {
		return nil, "", nil, false
	}
	return vals, t, notes, true
}

// mergeUnion merges the alternatives of a union into one schema for a
// dialect without unions. Objects are merged (properties united, a
// property's literal values united, required what every alternative
// requires); alternatives of another type than the one kept are described.
func (c *compiler) mergeUnion(alts []map[string]any, exclusive bool) (merged map[string]any, described int) {
	kinds := make([]string, len(alts))
	keepKind := ""
	for i, a := range alts {
		kinds[i] = groupKind(kindOf(a))
		if kinds[i] == "object" {
			keepKind = "object"
		}
	}
	if keepKind == "" {
		for _, k := range kinds {
			if k != "" {
				keepKind = k
				break
			}
		}
	}
	var group, others []map[string]any
	for i, a := range alts {
		if kinds[i] == keepKind || kinds[i] == "" {
			group = append(group, a)
		} else {
			others = append(others, a)
		}
	}
	out := c.mergeGroup(group, exclusive)
	if len(others) > 0 {
		var alts []string
		for _, o := range others {
			alts = append(alts, c.compact(o, 1))
		}
		addHint(out, "or "+strings.Join(alts, " or "))
	}
	return out, len(others)
}

// groupKind puts integers with numbers.
func groupKind(k string) string {
	if k == "integer" {
		return "number"
	}
	return k
}

// annotations are the keywords two alternatives may differ in and still
// be the same shape.
var annotationKeywords = []string{"description", "title", "examples", "example", "default", "$comment", "deprecated", "readOnly", "writeOnly"}

// sameShape reports whether two schemas differ at most in annotations.
func sameShape(a, b any) bool {
	x, xok := a.(map[string]any)
	y, yok := b.(map[string]any)
	if !xok || !yok {
		return equal(a, b)
	}
	strip := func(m map[string]any) map[string]any {
		out := maps.Clone(m)
		for _, k := range annotationKeywords {
			delete(out, k)
		}
		delete(out, hintKey)
		return out
	}
	return equal(strip(x), strip(y))
}

// mergeGroup merges alternatives of one type into one schema that accepts
// each of them. When which combination is valid matters, the description
// lists the forms.
func (c *compiler) mergeGroup(group []map[string]any, exclusive bool) map[string]any {
	switch len(group) {
	case 0:
		return map[string]any{}
	case 1:
		return maps.Clone(group[0])
	}
	alts := make([]any, len(group))
	for i, g := range group {
		alts[i] = g
	}
	if vals, typ, notes, ok := literals(alts); ok {
		out := map[string]any{"enum": vals, "type": typ}
		addHint(out, notes...)
		return out
	}
	out := map[string]any{}
	if t := kindOf(group[0]); t != "" {
		types := []any{}
		for _, g := range group {
			for _, t := range typeSet(g["type"]) {
				if !slices.Contains(types, any(t)) {
					types = append(types, t)
				}
			}
		}
		switch {
		case len(types) == 1:
			out["type"] = types[0]
		case len(types) > 1:
			out["type"] = types
		default:
			out["type"] = t
		}
	}
	forms := c.mergeProperties(out, group)
	// Keywords every alternative has alike are kept; the others make the
	// forms differ.
	for _, k := range allKeys(group) {
		switch k {
		case "type", "properties", "required", hintKey:
			continue
		}
		first, ok := group[0][k]
		same := ok
		for _, g := range group[1:] {
			if v, ok := g[k]; !ok || !equal(v, first) {
				same = false
				break
			}
		}
		if same {
			out[k] = first
		} else if !slices.Contains(annotationKeywords, k) {
			forms = true
		}
	}
	if forms {
		var list []string
		for _, g := range group {
			list = append(list, c.form(g))
		}
		lead := "at least one of: "
		if exclusive {
			lead = "exactly one of: "
		}
		addHint(out, lead+strings.Join(list, " | "))
	}
	return out
}

// mergeProperties unites the properties of the alternatives into out and
// sets out's required to the names every alternative requires. It reports
// whether the alternatives differ in their properties or required names.
func (c *compiler) mergeProperties(out map[string]any, group []map[string]any) bool {
	var order []string
	byName := map[string][]any{}
	differ := false
	var keys0 []string
	for i, g := range group {
		props, _ := g["properties"].(map[string]any)
		keys := sortedKeys(props)
		if i == 0 {
			keys0 = keys
		} else if !slices.Equal(keys, keys0) {
			differ = true
		}
		for _, k := range keys {
			if _, seen := byName[k]; !seen {
				order = append(order, k)
			}
			byName[k] = append(byName[k], props[k])
		}
	}
	if len(order) > 0 {
		props := make(map[string]any, len(order))
		for _, k := range order {
			props[k] = mergeProperty(byName[k])
		}
		out["properties"] = props
	}
	var required []any
	req0 := requiredOf(group[0])
	for _, r := range req0 {
		all := true
		for _, g := range group[1:] {
			if !slices.Contains(requiredOf(g), r) {
				all = false
			}
		}
		if all {
			required = append(required, r)
		}
	}
	for _, g := range group[1:] {
		if len(requiredOf(g)) != len(req0) {
			differ = true
		}
	}
	if len(required) != len(req0) {
		differ = true
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return differ
}

// mergeProperty merges the schemas several alternatives give one property:
// literal values are united; schemas of the same shape are one; different
// shapes become a union, compiled in turn.
func mergeProperty(schemas []any) any {
	if len(schemas) == 1 {
		return schemas[0]
	}
	if vals, typ, notes, ok := literals(schemas); ok {
		out := map[string]any{"enum": vals, "type": typ}
		if d := firstDescription(schemas); d != "" {
			out["description"] = d
		}
		addHint(out, notes...)
		return out
	}
	var distinct []any
	for _, s := range schemas {
		if !slices.ContainsFunc(distinct, func(d any) bool { return sameShape(d, s) }) {
			distinct = append(distinct, s)
		}
	}
	if len(distinct) == 1 {
		out, ok := distinct[0].(map[string]any)
		if !ok {
			return distinct[0]
		}
		if d := firstDescription(schemas); d != "" && out["description"] == nil {
			out = maps.Clone(out)
			out["description"] = d
		}
		return out
	}
	out := map[string]any{"anyOf": distinct}
	if d := firstDescription(schemas); d != "" {
		out["description"] = d
	}
	return out
}

func firstDescription(schemas []any) string {
	for _, s := range schemas {
		if m, ok := s.(map[string]any); ok {
			if d, ok := m["description"].(string); ok && d != "" {
				return d
			}
		}
	}
	return ""
}

// requiredOf returns a schema's required names.
func requiredOf(m map[string]any) []any {
	r, _ := m["required"].([]any)
	return r
}

// allKeys returns the keywords any of the schemas has, sorted.
func allKeys(group []map[string]any) []string {
	seen := map[string]bool{}
	for _, g := range group {
		for k := range g {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

// form renders one alternative of a merged union for its description:
// an object as its property names, "?" after the optional ones.
func (c *compiler) form(m map[string]any) string {
	label := ""
	if t, ok := m["title"].(string); ok && t != "" {
		label = t + ": "
	} else if d, ok := m["description"].(string); ok && d != "" && len(d) <= 60 {
		label = d + ": "
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		return label + c.compact(m, 1)
	}
	req := requiredOf(m)
	var names []string
	for _, k := range sortedKeys(props) {
		if slices.Contains(req, any(k)) {
			names = append(names, k)
		} else {
			names = append(names, k+"?")
		}
	}
	return label + "{" + strings.Join(names, ", ") + "}"
}

// literalList renders values for a description: "a", "b", 3.
func literalList(v any) string {
	list, ok := v.([]any)
	if !ok {
		return literal(v)
	}
	parts := make([]string, 0, len(list))
	for i, e := range list {
		if i == 20 {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(list)-i))
			break
		}
		parts = append(parts, literal(e))
	}
	return strings.Join(parts, ", ")
}
