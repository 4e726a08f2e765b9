package schema

import (
	"fmt"
	"slices"
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
	OpenAI = Dialect{name: "openai", typeArrays: true, simplify: true, items: true, rootProperties: true}

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
	}

	// Anthropic accepts full JSON Schema (draft 2020-12); only the root
	// shape is fixed.
	Anthropic = Dialect{name: "anthropic", typeArrays: true}

	// Gemini is the OpenAPI 3.0 subset of a function declaration's
	// "parameters": no references, unions, type arrays, open maps or
	// numeric, length and count bounds; nullable said with "nullable";
	// string enums only; every node typed.
	Gemini = Dialect{
		name:     "gemini",
		accept:   setOf("type", "format", "description", "nullable", "enum", "properties", "required", "items"),
		formats:  map[string]set{"string": setOf("date-time"), "integer": setOf("int32", "int64"), "number": setOf("float", "double")},
		simplify: true, stringEnums: true, typed: true, items: true, declaredRequired: true,
	}

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
	}

	// XAI is OpenAI's dialect without length and item-count keywords, which
	// xAI rejects.
	XAI = Dialect{name: "xai", reject: setOf(append(slices.Clone(stringBounds), itemBounds...)...),
		typeArrays: true, simplify: true, items: true, rootProperties: true}
)

// Compat returns OpenAI's dialect without the given keywords, for other
// OpenAI-compatible servers (llama.cpp, vLLM, Ollama, Moonshot…) whose
// schema handling chokes on some of them. The removed constraints are moved
// into descriptions like any other.
func Compat(keywords ...string) Dialect {
	d := OpenAI
	d.reject = setOf(keywords...)
	d.name = "compat:" + strings.Join(d.reject.sorted(), ",")
	return d
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
	return (d.accept == nil || d.accept[keyword]) && !d.reject[keyword]
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
