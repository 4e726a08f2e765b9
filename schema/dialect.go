package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Dialect is the subset of JSON Schema one model provider accepts in tool
// parameters, as data: which keywords it keeps, which formats, and a few
// switches for the rules that rewrite what it cannot express. Compile a
// schema into it with [Dialect.Compile]; find what it would reject with
// [Dialect.Lint].
//
// The built-in dialects are [OpenAI], [OpenAIStrict], [Anthropic], [Gemini],
// [GeminiJSON] and [XAI]; [Compat] makes one for other OpenAI-compatible
// servers and [ParseDialect] finds one by name. A Dialect is immutable.
type Dialect struct {
	name string
	// accept lists the keywords the provider accepts; nil accepts every
	// keyword. reject lists keywords it refuses even so.
	accept, reject set
	// formats lists the values of "format" the provider accepts, by the
	// type of the node; nil accepts every format.
	formats map[string]set
	// typeArrays: "type": ["string", "null"] is accepted. Without it a
	// nullable value is said with "nullable": true when that keyword is
	// accepted, else with an anyOf that has a {"type": "null"} alternative.
	typeArrays bool
	// simplify rewrites nullable unions into the dialect's way to say
	// nullable and unions of literals into one enum, even where unions
	// are accepted.
	simplify bool
	// stringEnums: enum values must be strings, on a node of type string.
	stringEnums bool
	// typed: every schema node needs a "type".
	typed bool
	// items: every array needs "items".
	items bool
	// rootProperties: the root object needs "properties", even empty.
	rootProperties bool
	// declaredRequired: "required" may only name declared properties.
	declaredRequired bool
	// strict applies OpenAI's strict mode: every object closed and fully
	// required, optional properties nullable.
	strict bool
	// accepted answers Accepts for the keywords of indexedKeywords, bit
	// keywordIndex(k), without the two set lookups; indexed says it is
	// filled in (see indexed).
	accepted uint64
	indexed  bool
	// refusals holds, by keywordIndex, the problem reported for an indexed
	// keyword the dialect does not accept: "gemini does not accept \"title\"".
	refusals []string
}

// set is a set of keywords or formats.
type set map[string]bool

func setOf(words ...string) set {
	s := make(set, len(words))
	for _, w := range words {
		s[w] = true
	}
	return s
}

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for w := range s {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// Keywords that only some providers accept, by what they constrain; see the
// dialect table in the README.
var (
	stringBounds = []string{"minLength", "maxLength"}
	itemBounds   = []string{"minItems", "maxItems", "minContains", "maxContains"}
)

// The built-in dialects. Their keyword lists follow each provider's
// documented limits (and, for Gemini, the keywords its API is known to
// answer with HTTP 400); everything else a provider cannot take is moved
// into descriptions by the compiler, never silently dropped.
var (
	// OpenAI is Chat Completions and Responses function parameters without
	// strict mode: any JSON Schema below an object root that declares
	// properties; every array needs items.
	OpenAI = Dialect{name: "openai", typeArrays: true, simplify: true, items: true, rootProperties: true}.withIndex()

	// OpenAIStrict is OpenAI's strict mode (Structured Outputs for
	// function calling): a documented subset, every object closed and fully
	// required, optional properties nullable, no allOf, oneOf or open maps.
	OpenAIStrict = Dialect{
		name: "openai-strict",
		accept: setOf("type", "description", "title", "properties", "required", "additionalProperties",
			"items", "anyOf", "enum", "const", "$ref", "$defs", "definitions",
			"pattern", "format", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
			"minItems", "maxItems"),
		formats:    map[string]set{"string": setOf("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")},
		typeArrays: true, simplify: true, items: true, rootProperties: true, declaredRequired: true, strict: true,
	}.withIndex()

	// Anthropic accepts full JSON Schema (draft 2020-12); only the root
	// shape is fixed.
	Anthropic = Dialect{name: "anthropic", typeArrays: true}.withIndex()

	// Gemini is the OpenAPI 3.0 subset of a function declaration's
	// "parameters": no references, unions, type arrays, open maps or
	// numeric, length and count bounds; nullable said with "nullable";
	// string enums only; every node typed.
	Gemini = Dialect{
		name:     "gemini",
		accept:   setOf("type", "format", "description", "nullable", "enum", "properties", "required", "items"),
		formats:  map[string]set{"string": setOf("date-time"), "integer": setOf("int32", "int64"), "number": setOf("float", "double")},
		simplify: true, stringEnums: true, typed: true, items: true, declaredRequired: true,
	}.withIndex()

	// GeminiJSON is a function declaration's "parametersJsonSchema", which
	// takes more of JSON Schema: references, anyOf, additionalProperties,
	// numeric and item-count bounds.
	GeminiJSON = Dialect{
		name: "gemini-json",
		accept: setOf("$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum",
			"items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf",
			"properties", "additionalProperties", "required", "propertyOrdering"),
		formats:  map[string]set{"string": setOf("date-time", "date", "time"), "integer": setOf("int32", "int64"), "number": setOf("float", "double")},
		simplify: true, typed: true, items: true, declaredRequired: true,
	}.withIndex()

	// XAI is OpenAI's dialect without length and item-count keywords, which
	// xAI rejects.
	XAI = Dialect{name: "xai", reject: setOf(append(slices.Clone(stringBounds), itemBounds...)...),
		typeArrays: true, simplify: true, items: true, rootProperties: true}.withIndex()
)

// Compat returns OpenAI's dialect without the given keywords, for other
// OpenAI-compatible servers (llama.cpp, vLLM, Ollama, Moonshot…) whose
// schema handling chokes on some of them. The removed constraints are moved
// into descriptions like any other.
func Compat(keywords ...string) Dialect {
	d := OpenAI
	d.reject = setOf(keywords...)
	d.name = "compat:" + strings.Join(d.reject.sorted(), ",")
	return d.withIndex()
}

// Dialects returns the built-in dialects, in the order of the README table.
func Dialects() []Dialect {
	return []Dialect{OpenAI, OpenAIStrict, Anthropic, Gemini, GeminiJSON, XAI}
}

// ParseDialect returns the dialect with this name: "openai", "openai-strict",
// "anthropic", "gemini", "gemini-json", "xai", or "compat:kw1,kw2" for
// [Compat] without those keywords.
func ParseDialect(name string) (Dialect, error) {
	name = strings.TrimSpace(name)
	if rest, ok := strings.CutPrefix(name, "compat:"); ok || name == "compat" {
		var kws []string
		for _, k := range strings.Split(rest, ",") {
			if k = strings.TrimSpace(k); k != "" {
				kws = append(kws, k)
			}
		}
		if len(kws) == 0 {
			return Dialect{}, fmt.Errorf("dialect %q names no keywords to strip: write compat:minLength,maxLength", name)
		}
		return Compat(kws...), nil
	}
	for _, d := range Dialects() {
		if d.name == name {
			return d, nil
		}
	}
	return Dialect{}, fmt.Errorf("unknown dialect %q: use one of %s", name, strings.Join(DialectNames(), ", "))
}

// DialectNames lists the names [ParseDialect] accepts.
func DialectNames() []string {
	var names []string
	for _, d := range Dialects() {
		names = append(names, d.name)
	}
	return append(names, "compat:KEYWORD,…")
}

// Name returns the dialect's name, as [ParseDialect] accepts it.
func (d Dialect) Name() string { return d.name }

// String returns the dialect's name.
func (d Dialect) String() string { return d.name }

// Strict reports whether the dialect is OpenAI's strict mode.
func (d Dialect) Strict() bool { return d.strict }

// Accepts reports whether the dialect keeps keyword where it appears in a
// schema.
func (d Dialect) Accepts(keyword string) bool {
	if d.indexed {
		if i := keywordIndex(keyword); i >= 0 {
			return d.accepted&(1<<i) != 0
		}
	}
	return d.inSets(keyword)
}

// acceptsIndexed is Accepts(k) for k, an indexed keyword at index i.
func (d Dialect) acceptsIndexed(i int, k string) bool {
	if d.indexed {
		return d.accepted&(1<<i) != 0
	}
	return d.inSets(k)
}

// keywordIndex returns k's position in indexedKeywords, or -1.
func keywordIndex(k string) int {
	switch k {
	case "type":
		return 0
	case "description":
		return 1
	case "title":
		return 2
	case "properties":
		return 3
	case "required":
		return 4
	case "additionalProperties":
		return 5
	case "items":
		return 6
	case "anyOf":
		return 7
	case "oneOf":
		return 8
	case "allOf":
		return 9
	case "enum":
		return 10
	case "const":
		return 11
	case "$ref":
		return 12
	case "$defs":
		return 13
	case "definitions":
		return 14
	case "pattern":
		return 15
	case "format":
		return 16
	case "multipleOf":
		return 17
	case "minimum":
		return 18
	case "maximum":
		return 19
	case "exclusiveMinimum":
		return 20
	case "exclusiveMaximum":
		return 21
	case "minItems":
		return 22
	case "maxItems":
		return 23
	case "minLength":
		return 24
	case "maxLength":
		return 25
	case "default":
		return 26
	case "examples":
		return 27
	case "example":
		return 28
	case "nullable":
		return 29
	case "not":
		return 30
	case "if":
		return 31
	case "then":
		return 32
	case "else":
		return 33
	case "prefixItems":
		return 34
	case "additionalItems":
		return 35
	case "contains":
		return 36
	case "minContains":
		return 37
	case "maxContains":
		return 38
	case "uniqueItems":
		return 39
	case "patternProperties":
		return 40
	case "propertyNames":
		return 41
	case "minProperties":
		return 42
	case "maxProperties":
		return 43
	case "dependentRequired":
		return 44
	case "dependentSchemas":
		return 45
	case "dependencies":
		return 46
	case "unevaluatedItems":
		return 47
	case "unevaluatedProperties":
		return 48
	case "contentMediaType":
		return 49
	case "contentEncoding":
		return 50
	case "contentSchema":
		return 51
	case "deprecated":
		return 52
	case "readOnly":
		return 53
	case "writeOnly":
		return 54
	case "$schema":
		return 55
	case "$id":
		return 56
	case "$comment":
		return 57
	case "$anchor":
		return 58
	case "propertyOrdering":
		return 59
	}
	return -1
}

// inSets answers Accepts from the dialect's keyword sets.
func (d Dialect) inSets(keyword string) bool {
	return (d.accept == nil || d.accept[keyword]) && !d.reject[keyword]
}

// withIndex returns d with Accepts' answers for indexedKeywords filled in:
// the compiler asks it for every keyword of every node.
func (d Dialect) withIndex() Dialect {
	d.accepted = 0
	d.refusals = make([]string, len(indexedKeywords))
	for i, k := range indexedKeywords {
		if d.inSets(k) {
			d.accepted |= 1 << i
		} else {
			d.refusals[i] = d.name + " does not accept " + strconv.Quote(k)
		}
	}
	d.indexed = true
	return d
}

// indexedKeywords are the keywords Accepts answers from a bit mask, in the
// order of their bits; keywordIndex finds one.
var indexedKeywords = []string{
	"type", "description", "title", "properties", "required", "additionalProperties", "items", "anyOf",
	"oneOf", "allOf", "enum", "const", "$ref", "$defs", "definitions", "pattern",
	"format", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
	"minLength", "maxLength", "default", "examples", "example", "nullable", "not", "if",
	"then", "else", "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "uniqueItems",
	"patternProperties", "propertyNames", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedItems",
	"unevaluatedProperties", "contentMediaType", "contentEncoding", "contentSchema", "deprecated", "readOnly", "writeOnly", "$schema",
	"$id", "$comment", "$anchor", "propertyOrdering",
}

// acceptsFormat reports whether the dialect keeps "format": f on a node of
// this type.
func (d Dialect) acceptsFormat(f, typ string) bool {
	return d.Accepts("format") && (d.formats == nil || d.formats[typ][f])
}

// unions reports whether the dialect keeps anyOf.
func (d Dialect) unions() bool { return d.Accepts("anyOf") }

// refs reports whether the dialect keeps local references to definitions.
func (d Dialect) refs() bool { return d.Accepts("$ref") && d.Accepts("$defs") }

// nullableKeyword reports whether the dialect says nullable with
// "nullable": true (OpenAPI 3.0).
func (d Dialect) nullableKeyword() bool { return d.accept["nullable"] && !d.reject["nullable"] }

// booleans reports whether the dialect keeps boolean schemas (true, false)
// as they are: only where it takes JSON Schema untouched.
func (d Dialect) booleans() bool { return d.accept == nil && !d.simplify }
