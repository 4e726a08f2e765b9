package schema

import (
	"strconv"
	"strings"
	"testing"
)

// hardCases are schemas that break naive converters: nested unions,
// reference chains, cycles, allOf, nullable and literal unions, and
// malformed input. Every case is compiled for every dialect and must pass
// checkCompiled; the cases with expectations are also checked in detail.
var hardCases = []struct {
	name, schema string
}{
	{"no parameters", `null`},
	{"empty", `{}`},
	{"bare object", `{"type":"object"}`},
	{"properties without type", `{"properties":{"a":{"type":"string"}},"required":["a"]}`},
	{"nested unions", `{"type":"object","properties":{"shape":{"anyOf":[
		{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number","minimum":0}},"required":["kind","r"],"additionalProperties":false},
		{"anyOf":[
			{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind","side"]},
			{"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"number"},"h":{"type":"number"}},"required":["kind","w","h"]}
		]}
	]}},"required":["shape"]}`},
	{"ref chain", `{"type":"object","properties":{"to":{"$ref":"#/$defs/a","description":"Where to send it"}},
		"$defs":{"a":{"$ref":"#/$defs/b","description":"A"},"b":{"$ref":"#/$defs/c"},"c":{"type":"string","format":"email","description":"C"}}}`},
	{"self cycle", `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","description":"A tree node","properties":{
		"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value"]}}}`},
	{"mutual cycle", `{"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"definitions":{
		"A":{"type":"object","properties":{"b":{"$ref":"#/definitions/B"},"name":{"type":"string"}}},
		"B":{"type":"object","properties":{"a":{"$ref":"#/definitions/A"},"n":{"type":"integer"}}}}}`},
	{"root self reference", `{"type":"object","properties":{"name":{"type":"string"},"next":{"$ref":"#"}},"required":["name"]}`},
	{"root ref", `{"$ref":"#/$defs/args","$defs":{"args":{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"]}}}`},
	{"root allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
		{"type":"object","properties":{"b":{"type":"integer","minimum":1},"a":{"maxLength":5}},"required":["b"]}]}`},
	{"nested allOf", `{"type":"object","properties":{"n":{"allOf":[{"type":"integer","minimum":1,"maximum":100},{"minimum":5,"multipleOf":5}]}}}`},
	{"root anyOf", `{"anyOf":[{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"}},"required":["path","line"]},
		{"type":"object","properties":{"path":{"type":"string"},"pattern":{"type":"string"}},"required":["path","pattern"]}]}`},
	{"root oneOf with required", `{"type":"object","required":["mode"],"oneOf":[
		{"properties":{"mode":{"const":"a"},"x":{"type":"string"}}},{"properties":{"mode":{"const":"b"},"y":{"type":"string"}}},{"type":"string"}]}`},
	{"nullable unions", `{"type":"object","properties":{
		"a":{"anyOf":[{"type":"string","maxLength":10},{"type":"null"}]},
		"b":{"type":["integer","null"],"minimum":0},
		"c":{"type":["string","null"],"enum":["x","y",null]},
		"d":{"oneOf":[{"$ref":"#/$defs/point"},{"type":"null"}],"description":"Optional point"},
		"e":{"type":"string","nullable":true}},
		"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}}}`},
	{"literal unions", `{"type":"object","properties":{
		"color":{"oneOf":[{"const":"red","description":"Warm"},{"const":"blue","description":"Cold"},{"enum":["green"]}]},
		"level":{"anyOf":[{"const":1},{"const":2},{"const":3}]},
		"flag":{"const":true}}}`},
	{"mixed type union", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string","pattern":"^a"},{"type":"array","items":{"type":"string"}}]},
		"w":{"type":["string","integer","boolean"]}}}`},
	{"union of object and string", `{"type":"object","properties":{"target":{"oneOf":[{"type":"string"},{"type":"object","properties":{"ref":{"type":"string"},"frame":{"type":"integer"}},"required":["ref"]}]}}}`},
	{"required oddities", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","toString","a",3,"missing"]}`},
	{"properties not an object", `{"type":"object","properties":[]}`},
	{"arrays without items", `{"type":"object","properties":{"tags":{"type":"array"},"m":{"type":"array","minItems":2}}}`},
	{"tuples", `{"type":"object","properties":{
		"p":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}],"items":false},
		"q":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":{"type":"boolean"}}}}`},
	{"remote and unknown refs", `{"type":"object","properties":{
		"r":{"$ref":"https://example.com/schema.json","description":"Remote"},
		"u":{"$ref":"#/$defs/missing","description":"Unknown"},
		"anchor":{"$ref":"#thing","type":"string"}}}`},
	{"pointer escapes", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a~1b"},"b":{"$ref":"#/$defs/with%20space"},"c":{"$ref":"#/$defs/t~0"}},
		"$defs":{"a/b":{"type":"string","description":"slash"},"with space":{"type":"integer"},"t~":{"type":"boolean"}}}`},
	{"deep pointer", `{"type":"object","properties":{"a":{"type":"object","properties":{"inner":{"type":"string","pattern":"^x"}}},"b":{"$ref":"#/properties/a/properties/inner"}}}`},
	{"open maps", `{"type":"object","properties":{
		"env":{"type":"object","additionalProperties":{"type":"string"}},
		"headers":{"type":"object","propertyNames":{"pattern":"^[A-Za-z-]+$"},"additionalProperties":{"type":"string","maxLength":100}},
		"labels":{"type":"object","patternProperties":{"^x-":{"type":"string"}}},
		"any":{"type":"object"}}}`},
	{"enums and consts", `{"type":"object","properties":{
		"n":{"type":"integer","enum":[1,2,3]},"s":{"enum":["a","b"]},"mixed":{"enum":["a",1,null]},"k":{"const":"fixed"}}}`},
	{"boolean schemas", `{"type":"object","properties":{"forbidden":false,"anything":true,"list":{"type":"array","items":true}}}`},
	{"conditionals", `{"type":"object","properties":{"kind":{"type":"string"},"n":{"type":"integer","not":{"const":13}}},
		"if":{"properties":{"kind":{"const":"x"}}},"then":{"required":["n"]},"dependentRequired":{"kind":["n"]}}`},
	{"root not an object", `{"type":"string","minLength":1}`},
	{"not a schema", `[1,2]`},
	{"annotations", `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","title":"Args","type":"object",
		"properties":{"q":{"title":"Query","type":"string","examples":["cats"],"default":"dogs","deprecated":true,"x-extra":1}}}`},
}

func TestHardCasesCompileForEveryDialect(t *testing.T) {
	t.Parallel()
	for _, tc := range hardCases {
		doc := decode(t, tc.schema)
		for _, d := range testDialects() {
			t.Run(tc.name+"/"+d.Name(), func(t *testing.T) {
				t.Parallel()
				checkCompiled(t, d, doc)
			})
		}
	}
}

// compileCase compiles one hard case.
func compileCase(t *testing.T, name string, d Dialect) (map[string]any, Report) {
	t.Helper()
	for _, tc := range hardCases {
		if tc.name == name {
			return d.Compile(decode(t, tc.schema))
		}
	}
	t.Fatalf("no hard case %q", name)
	return nil, Report{}
}

// at returns the value at a path of keys (and array indexes) inside a
// compiled schema.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				t.Fatalf("at %v: no element %q in %v", keys, k, x)
			}
			v = x[i]
		default:
			t.Fatalf("at %v: %q is not inside an object or array (%v)", keys, k, v)
		}
	}
	return v
}

func TestCompileExpectations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		d       Dialect
		keys    []string // where to look in the compiled schema
		want    string   // its JSON
		inDesc  string   // or: text its description must contain
		changed string   // and: a report line that must be there
	}{
		{"no parameters", Gemini, nil, `{"properties":{},"type":"object"}`, "", ""},
		{"bare object", OpenAI, nil, `{"properties":{},"type":"object"}`, "", `properties: empty properties added`},
		{"properties without type", Anthropic, []string{"type"}, `"object"`, "", `type: "type": "object" added`},
		{"nested unions", Gemini, []string{"properties", "shape", "properties", "kind"}, `{"enum":["circle","square","rect"],"type":"string"}`, "", ""},
		{"nested unions", Gemini, []string{"properties", "shape", "required"}, `["kind"]`, "", "properties.shape.anyOf: 3 alternatives merged into one schema"},
		{"nested unions", Gemini, []string{"properties", "shape"}, "", "one of: {kind, r} | {kind, side} | {h, kind, w}", ""},
		{"nested unions", Gemini, []string{"properties", "shape", "properties", "r"}, "", "≥ 0", ""},
		{"nested unions", OpenAIStrict, []string{"properties", "shape", "anyOf"}, "", "", ""},
		{"ref chain", Gemini, []string{"properties", "to"}, `{"description":"Where to send it (format: email)","type":"string"}`, "", "properties.to.$ref: reference #/$defs/a inlined"},
		{"ref chain", OpenAIStrict, []string{"properties", "to", "anyOf", "0", "$ref"}, "", "", ""},
		{"self cycle", Gemini, []string{"properties", "root", "properties", "children", "items"}, "", "recursive: the same shape as #/$defs/node again", "properties.root.properties.children.items: recursive reference #/$defs/node cut here with a placeholder of type object"},
		{"self cycle", Anthropic, []string{"properties", "root", "$ref"}, `"#/$defs/node"`, "", ""},
		{"mutual cycle", GeminiJSON, []string{"properties", "a", "$ref"}, `"#/$defs/A"`, "", "definitions: moved to $defs"},
		{"root self reference", OpenAI, []string{"properties", "next", "type"}, `"object"`, "", "properties.next: recursive reference # cut here with a placeholder of type object"},
		{"root ref", Gemini, nil, `{"properties":{"q":{"description":"at least 1 char","type":"string"}},"required":["q"],"type":"object"}`, "", "$ref: reference #/$defs/args inlined"},
		{"root allOf", Gemini, []string{"required"}, `["a","b"]`, "", "allOf: 2 schemas merged into one object"},
		{"root allOf", Gemini, []string{"properties", "a"}, `{"description":"at most 5 chars","type":"string"}`, "", ""},
		{"nested allOf", OpenAIStrict, []string{"properties", "n"}, `{"maximum":100,"minimum":5,"multipleOf":5,"type":["integer","null"]}`, "", ""},
		{"root anyOf", OpenAI, []string{"required"}, `["path"]`, "", "anyOf: 2 alternatives merged into one object"},
		{"root anyOf", OpenAI, nil, "", "one of: {line, path} | {path, pattern}", ""},
		{"root oneOf with required", Gemini, []string{"required"}, `["mode"]`, "", "oneOf[2]: alternative string removed: tool arguments are always an object"},
		{"root oneOf with required", Gemini, nil, "", "exactly one of: {mode?, x?} | {mode?, y?}", ""},
		{"root oneOf with required", Gemini, []string{"properties", "mode"}, `{"enum":["a","b"],"type":"string"}`, "", ""},
		{"nullable unions", Gemini, []string{"properties", "a"}, `{"description":"at most 10 chars","nullable":true,"type":"string"}`, "", ""},
		{"nullable unions", OpenAI, []string{"properties", "a"}, `{"maxLength":10,"type":["string","null"]}`, "", "properties.a.anyOf: single alternative inlined, nullable"},
		{"nullable unions", GeminiJSON, []string{"properties", "b"}, `{"anyOf":[{"minimum":0,"type":"integer"},{"type":"null"}]}`, "", ""},
		{"nullable unions", Gemini, []string{"properties", "c"}, `{"enum":["x","y"],"nullable":true,"type":"string"}`, "", ""},
		{"nullable unions", Gemini, []string{"properties", "d"}, `{"description":"Optional point","nullable":true,"properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"type":"object"}`, "", ""},
		{"nullable unions", OpenAIStrict, []string{"properties", "e"}, `{"type":["string","null"]}`, "", ""},
		{"literal unions", Gemini, []string{"properties", "color"}, `{"description":"\"red\": Warm; \"blue\": Cold","enum":["red","blue","green"],"type":"string"}`, "", "properties.color.oneOf: 3 literal alternatives rewritten as one enum"},
		{"literal unions", Gemini, []string{"properties", "level"}, `{"description":"one of: 1, 2, 3","type":"integer"}`, "", ""},
		{"literal unions", OpenAI, []string{"properties", "level"}, `{"enum":[1,2,3],"type":"integer"}`, "", ""},
		{"literal unions", Gemini, []string{"properties", "flag"}, `{"description":"one of: true","type":"boolean"}`, "", ""},
		{"mixed type union", Gemini, []string{"properties", "v"}, `{"description":"pattern ^a; or array of string","type":"string"}`, "", ""},
		{"mixed type union", Gemini, []string{"properties", "w"}, `{"description":"or integer or boolean","type":"string"}`, "", ""},
		{"union of object and string", Gemini, []string{"properties", "target", "properties", "ref"}, `{"type":"string"}`, "", ""},
		{"union of object and string", Gemini, []string{"properties", "target"}, "", "or string", ""},
		{"required oddities", Gemini, []string{"required"}, `["a"]`, "", `required: undeclared names "toString", "missing" moved to description`},
		{"required oddities", Gemini, nil, "", `also requires "toString", "missing"`, ""},
		{"required oddities", Anthropic, []string{"required"}, `["a","toString","missing"]`, "", ""},
		{"properties not an object", Gemini, []string{"properties"}, `{}`, "", "properties: not an object; replaced by {}"},
		{"arrays without items", OpenAI, []string{"properties", "tags", "items"}, `{}`, "", "properties.tags.items: items added (any value)"},
		{"arrays without items", Gemini, []string{"properties", "m"}, `{"description":"at least 2 items","items":{"description":"any JSON value","type":"string"},"type":"array"}`, "", ""},
		{"tuples", Gemini, []string{"properties", "p"}, `{"description":"tuple: item 1: number, item 2: number, at most 2 items","items":{"type":"number"},"type":"array"}`, "", ""},
		{"tuples", GeminiJSON, []string{"properties", "q"}, `{"items":{"type":"boolean"},"prefixItems":[{"type":"string"},{"type":"integer"}],"type":"array"}`, "", "properties.q.items: tuple rewritten as prefixItems"},
		{"remote and unknown refs", Gemini, []string{"properties", "r"}, `{"description":"Remote (any JSON value)","type":"string"}`, "", "properties.r.$ref: reference https://example.com/schema.json removed: only references inside the schema are followed, nothing is fetched"},
		{"remote and unknown refs", Anthropic, []string{"properties", "u"}, `{"description":"Unknown"}`, "", "properties.u.$ref: reference #/$defs/missing removed: it points at nothing in the schema"},
		{"pointer escapes", Gemini, []string{"properties"}, `{"a":{"description":"slash","type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"}}`, "", ""},
		{"deep pointer", GeminiJSON, []string{"properties", "b"}, `{"description":"pattern ^x","type":"string"}`, "", ""},
		{"open maps", Gemini, []string{"properties", "env"}, `{"description":"any keys, values: string","type":"object"}`, "", ""},
		{"open maps", Gemini, []string{"properties", "headers"}, "", "keys: pattern ^[A-Za-z-]+$", ""},
		{"open maps", Gemini, []string{"properties", "labels"}, `{"description":"keys matching ^x-: string","type":"object"}`, "", ""},
		{"enums and consts", Gemini, []string{"properties", "mixed"}, `{"description":"one of: \"a\", 1, null","type":"string"}`, "", ""},
		{"enums and consts", Gemini, []string{"properties", "k"}, `{"enum":["fixed"],"type":"string"}`, "", "properties.k.const: rewritten as a one-value enum"},
		{"boolean schemas", Gemini, nil, "", `"forbidden" must not be set`, `properties.forbidden: removed: the property must not be set (said in the description)`},
		{"boolean schemas", Anthropic, []string{"properties", "forbidden"}, `false`, "", ""},
		{"conditionals", Gemini, nil, "", `if "kind" is set, also "n"`, "if: moved to description"},
		{"conditionals", Gemini, []string{"properties", "n"}, `{"description":"not 13","type":"integer"}`, "", ""},
		{"root not an object", OpenAI, nil, `{"minLength":1,"properties":{},"type":"object"}`, "", `type: type "string" replaced by "object": tool arguments are always an object`},
		{"annotations", Gemini, []string{"properties", "q"}, `{"description":"Query (default: \"dogs\"; e.g. \"cats\"; deprecated)","type":"string"}`, "", "properties.q.x-extra: removed"},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.d.Name(), func(t *testing.T) {
			t.Parallel()
			out, rep := compileCase(t, tc.name, tc.d)
			got := at(t, out, tc.keys...)
			if tc.want != "" {
				if g := encode(t, got); g != tc.want {
					t.Errorf("compiled %v:\n got  %s\n want %s", tc.keys, g, tc.want)
				}
			}
			if tc.inDesc != "" {
				m, _ := got.(map[string]any)
				d, _ := m["description"].(string)
				if !strings.Contains(d, tc.inDesc) {
					t.Errorf("description %q does not contain %q", d, tc.inDesc)
				}
			}
			if tc.changed != "" && !strings.Contains(rep.String(), tc.changed+"\n") {
				t.Errorf("report lacks %q:\n%s", tc.changed, rep)
			}
			if tc.want == "" && tc.inDesc == "" && tc.changed == "" && got == nil {
				t.Errorf("nothing at %v in %s", tc.keys, encode(t, out))
			}
		})
	}
}
