package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/internal/textclip"
)

// Constraints a dialect cannot express are written into descriptions in a
// compact form a model reads easily:
//
//	(format: uuid; 1–64 chars; pattern ^[a-z]+$; at most 5 items)

// describeKeywords describes the constraints among keys, keywords of m that
// are being removed, in a fixed order, appended to hints. described lists
// the keywords that produced a description.
func (c *compiler) describeKeywords(m map[string]any, keys []string, depth int, hints []string) (_ []string, described []string) {
	// Most calls remove only keywords no rule describes ("$schema",
	// "title", extensions): they need none of the rules below.
	if !slices.ContainsFunc(keys, mayDescribe) {
		return hints, nil
	}
	return c.describeRules(m, keys, depth, hints)
}

// mayDescribe reports whether a rule of describeRules may describe keyword
// k: every constraint keyword, and the annotations it repeats.
func mayDescribe(k string) bool {
	switch k {
	case "default", "examples", "example", "deprecated":
		return true
	}
	return isConstraint(k)
}

// describeRules is describeKeywords for keys that may be described.
func (c *compiler) describeRules(m map[string]any, keys []string, depth int, hints []string) (_ []string, described []string) {
	var buf [8]string
	handled := buf[:0] // by a rule of its own, described or not
	removing := func(k string) bool {
		// keys is short: scanning it first spares most map lookups.
		return slices.Contains(keys, k) && hasKey(m, k)
	}
	add := func(h string, ks ...string) {
		if h != "" {
			hints = append(hints, h)
		}
		// Only keys matter to the caller and below: keep the lists short.
		for _, k := range ks {
			if slices.Contains(keys, k) {
				handled = append(handled, k)
				if h != "" {
					if described == nil {
						described = make([]string, 0, len(keys))
					}
					described = append(described, k)
				}
			}
		}
	}
	num := func(k string) string {
		if removing(k) && isNumber(m[k]) {
			return literal(m[k])
		}
		return ""
	}
	// The rules below that run for every call skip, on one bit each, what
	// none of keys needs: most calls remove one or two keywords.
	var rules uint8
	for _, k := range keys {
		rules |= countRule(k)
	}
	if removing("format") {
		add("format: "+plain(m["format"]), "format")
	}
	if rules&ruleLength != 0 {
		add(span(num("minLength"), num("maxLength"), "char"), "minLength", "maxLength")
	}
	if removing("pattern") {
		add("pattern "+plain(m["pattern"]), "pattern")
	}
	if rules&ruleBounds != 0 {
		add(bounds(m, removing), "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
	}
	if v := num("multipleOf"); v != "" {
		add("multiple of "+v, "multipleOf")
	}
	if rules&ruleItems != 0 {
		add(span(num("minItems"), num("maxItems"), "item"), "minItems", "maxItems")
	}
	if removing("uniqueItems") {
		add(map[bool]string{true: "unique items"}[m["uniqueItems"] == true], "uniqueItems")
	}
	if removing("contains") || removing("minContains") || removing("maxContains") {
		what := "items"
		if removing("contains") {
			what = "items matching " + c.compact(m["contains"], depth+1)
		}
		lo, hi := num("minContains"), num("maxContains")
		if lo == "" && hi == "" {
			lo = "1"
		}
		add(span(lo, hi, "")+" "+what, "contains", "minContains", "maxContains")
	}
	if rules&ruleKeys != 0 {
		add(span(num("minProperties"), num("maxProperties"), "key"), "minProperties", "maxProperties")
	}
	_, hasProps := m["properties"]
	if removing("additionalProperties") {
		add(c.others(m["additionalProperties"], hasProps, depth), "additionalProperties")
	}
	if removing("unevaluatedProperties") {
		add(c.others(m["unevaluatedProperties"], hasProps, depth), "unevaluatedProperties")
	}
	if removing("patternProperties") {
		add("", "patternProperties")
		if pp, ok := m["patternProperties"].(map[string]any); ok {
			for _, p := range sortedKeys(pp) {
				add("keys matching "+p+": "+c.compact(pp[p], depth+1), "patternProperties")
			}
		}
	}
	if removing("propertyNames") {
		s := c.compact(m["propertyNames"], depth+1)
		if s == "string" || s == "any value" {
			s = "" // keys are strings anyway
		} else {
			s = "keys: " + s
		}
		add(s, "propertyNames")
	}
	for _, k := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		if rules&ruleDeps == 0 || !removing(k) {
			continue
		}
		deps, _ := m[k].(map[string]any)
		for _, name := range sortedKeys(deps) {
			if list, ok := deps[name].([]any); ok {
				add(fmt.Sprintf("if %q is set, also %s", name, literalList(list)), k)
			} else {
				add(fmt.Sprintf("if %q is set: %s", name, c.compact(deps[name], depth+1)), k)
			}
		}
	}
	if removing("enum") {
		add("one of: "+literalList(m["enum"]), "enum")
	}
	if removing("const") {
		add("must be "+literal(m["const"]), "const")
	}
	if removing("not") {
		add("not "+c.compact(m["not"], depth+1), "not")
	}
	if removing("if") {
		h := "if " + c.compact(m["if"], depth+1)
		if _, ok := m["then"]; ok {
			h += " then " + c.compact(m["then"], depth+1)
		}
		if _, ok := m["else"]; ok {
			h += " else " + c.compact(m["else"], depth+1)
		}
		add(h, "if", "then", "else")
	}
	if removing("unevaluatedItems") {
		h := ""
		if m["unevaluatedItems"] != true {
			h = "further items: " + c.compact(m["unevaluatedItems"], depth+1)
		}
		add(h, "unevaluatedItems")
	}
	if removing("contentMediaType") {
		add("content: "+plain(m["contentMediaType"]), "contentMediaType")
	}
	if removing("contentEncoding") {
		add("encoding: "+plain(m["contentEncoding"]), "contentEncoding")
	}
	if removing("contentSchema") {
		add("content: "+c.compact(m["contentSchema"], depth+1), "contentSchema")
	}
	if removing("default") {
		add("default: "+literal(m["default"]), "default")
	}
	for _, k := range []string{"examples", "example"} {
		if removing(k) {
			if list, ok := m[k].([]any); ok && k == "examples" {
				if len(list) > 3 {
					list = list[:3]
				}
				add("e.g. "+literalList(list), k)
			} else {
				add("e.g. "+literal(m[k]), k)
			}
		}
	}
	if removing("deprecated") && m["deprecated"] == true {
		add("deprecated", "deprecated")
	}
	// Any other constraint keyword a dialect drops (compat can drop
	// anything) is described as it is.
	for _, k := range keys {
		if !isConstraint(k) || slices.Contains(handled, k) {
			continue
		}
		switch v := m[k].(type) {
		case map[string]any, bool:
			add(k+": "+c.compact(v, depth+1), k)
		default:
			add(k+": "+literal(v), k)
		}
	}
	return hints, described
}

// Bits of the rules of describeKeywords that would otherwise run for every
// call: countRule gives a keyword's.
const (
	ruleLength uint8 = 1 << iota
	ruleBounds
	ruleItems
	ruleKeys
	ruleDeps
)

func countRule(k string) uint8 {
	switch k {
	case "minLength", "maxLength":
		return ruleLength
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return ruleBounds
	case "minItems", "maxItems":
		return ruleItems
	case "minProperties", "maxProperties":
		return ruleKeys
	case "dependentRequired", "dependentSchemas", "dependencies":
		return ruleDeps
	}
	return 0
}

// isConstraint reports whether k is a keyword that constrains values, as
// opposed to annotations and structure. Removing one without describing
// it would lose a constraint.
func isConstraint(k string) bool {
	switch k {
	case "type", "enum", "const", "format", "pattern", "minLength", "maxLength",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
		"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
		"properties", "patternProperties", "additionalProperties", "propertyNames", "minProperties", "maxProperties", "required",
		"dependentRequired", "dependentSchemas", "dependencies", "not", "if", "then", "else", "allOf", "anyOf", "oneOf",
		"unevaluatedItems", "unevaluatedProperties", "contentMediaType", "contentEncoding", "contentSchema":
		return true
	}
	return false
}

// plain renders a string as it is and anything else as JSON.
func plain(v any) string {
	if s, ok := v.(string); ok {
		return textclip.Clip(s, 200)
	}
	return literal(v)
}

// span renders bounds on a count: "1–64 chars", "at least 1 item", "at
// most 5 keys", "exactly 3 items". unit "" renders the bare bounds.
func span(lo, hi, unit string) string {
	plural := func(n string) string {
		if unit == "" {
			return n
		}
		if n == "1" {
			return n + " " + unit
		}
		return n + " " + unit + "s"
	}
	switch {
	case lo != "" && hi != "" && lo == hi:
		return "exactly " + plural(hi)
	case lo != "" && hi != "":
		if unit == "" {
			return lo + "–" + hi
		}
		return lo + "–" + plural(hi)
	case lo != "":
		return "at least " + plural(lo)
	case hi != "":
		return "at most " + plural(hi)
	}
	return ""
}

// bounds renders numeric bounds being removed: "≥ 1", "> 0 and ≤ 100",
// "between 1 and 10". Draft-04 boolean exclusive bounds are understood.
func bounds(m map[string]any, removing func(string) bool) string {
	var lo, hi string
	loEx, hiEx := false, false
	if removing("minimum") && isNumber(m["minimum"]) {
		lo = literal(m["minimum"])
		loEx = m["exclusiveMinimum"] == true
	}
	if removing("maximum") && isNumber(m["maximum"]) {
		hi = literal(m["maximum"])
		hiEx = m["exclusiveMaximum"] == true
	}
	if removing("exclusiveMinimum") && isNumber(m["exclusiveMinimum"]) && (lo == "" || greater(m["exclusiveMinimum"], m["minimum"]) || equal(m["exclusiveMinimum"], m["minimum"])) {
		lo, loEx = literal(m["exclusiveMinimum"]), true
	}
	if removing("exclusiveMaximum") && isNumber(m["exclusiveMaximum"]) && (hi == "" || greater(m["maximum"], m["exclusiveMaximum"]) || equal(m["exclusiveMaximum"], m["maximum"])) {
		hi, hiEx = literal(m["exclusiveMaximum"]), true
	}
	switch {
	case lo != "" && hi != "" && !loEx && !hiEx:
		return "between " + lo + " and " + hi
	case lo != "" && hi != "":
		return op(">", loEx) + " " + lo + " and " + op("<", hiEx) + " " + hi
	case lo != "":
		return op(">", loEx) + " " + lo
	case hi != "":
		return op("<", hiEx) + " " + hi
	}
	return ""
}

func op(strict string, exclusive bool) string {
	switch {
	case exclusive:
		return strict
	case strict == ">":
		return "≥"
	}
	return "≤"
}

// others describes what additionalProperties (or unevaluatedProperties)
// allows beyond the declared properties. false needs no words: a model
// sends the declared properties.
func (c *compiler) others(v any, hasProps bool, depth int) string {
	if v == false {
		return ""
	}
	open := v == true
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		open = true
	}
	switch {
	case open && hasProps:
		return "other keys allowed"
	case open:
		return "any keys"
	case hasProps:
		return "other keys: " + c.compact(v, depth+1)
	}
	return "any keys, values: " + c.compact(v, depth+1)
}

// compact renders a schema in a few words for a description: "string
// (1–64 chars)", "object {a, b?}", "array of integer", "one of "a", "b"".
// References are followed a few levels; the text is cut at 160 characters.
func (c *compiler) compact(v any, depth int) string {
	return textclip.Clip(c.compactN(v, depth), 160)
}

func (c *compiler) compactN(v any, depth int) string {
	m, ok := v.(map[string]any)
	if !ok {
		switch v {
		case true:
			return "any value"
		case false:
			return "no value"
		}
		return literal(v)
	}
	if depth > 3 {
		return "…"
	}
	if ref, ok := m["$ref"].(string); ok {
		if target, _, err := c.resolve(ref); err == nil {
			return c.compactN(target, depth+1)
		}
		return "see " + ref
	}
	if len(m) == 0 {
		return "any value"
	}
	var head string
	switch {
	case hasKey(m, "const"):
		head = literal(m["const"])
	case hasKey(m, "enum"):
		head = "one of " + literalList(m["enum"])
	case hasKey(m, "anyOf") || hasKey(m, "oneOf"):
		alts, _ := m["anyOf"].([]any)
		if alts == nil {
			alts, _ = m["oneOf"].([]any)
		}
		var parts []string
		for _, a := range alts {
			parts = append(parts, c.compactN(a, depth+1))
		}
		head = strings.Join(parts, " | ")
	case hasKey(m, "properties"):
		props, _ := m["properties"].(map[string]any)
		req := requiredOf(m)
		var parts []string
		for _, k := range sortedKeys(props) {
			part := k
			if !slices.Contains(req, any(k)) {
				part += "?"
			}
			if depth < 3 {
				part += ": " + c.compactN(props[k], depth+1)
			}
			parts = append(parts, part)
		}
		head = "{" + strings.Join(parts, ", ") + "}"
		if hasType(m, "object") {
			head = "object " + head
		}
	case hasKey(m, "required"):
		head = "requires " + literalList(m["required"])
	case hasKey(m, "items"):
		head = "array of " + c.compactN(m["items"], depth+1)
	default:
		types := typeSet(m["type"])
		head = strings.Join(types, " or ")
	}
	var keys []string
	for k := range m {
		switch k {
		case "type", "const", "enum", "anyOf", "oneOf", "properties", "required", "items":
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	hints, _ := c.describeKeywords(m, keys, depth, nil)
	switch {
	case len(hints) == 0 && head == "":
		if d, ok := m["description"].(string); ok {
			return textclip.Clip(d, 60)
		}
		return "any value"
	case len(hints) == 0:
		return head
	case head == "":
		return strings.Join(hints, ", ")
	}
	return head + " (" + strings.Join(hints, ", ") + ")"
}
