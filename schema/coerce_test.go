package schema

import (
	"strings"
	"testing"
)

const coerceSchema = `{
	"type": "object",
	"properties": {
		"count": {"type": "integer", "minimum": 1},
		"ratio": {"type": "number"},
		"on": {"type": "boolean"},
		"id": {"type": "string"},
		"either": {"type": ["string", "integer"]},
		"union": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
		"maybe": {"type": ["integer", "null"]},
		"opt": {"type": "string"},
		"need": {"type": "string"},
		"ref": {"$ref": "#/$defs/n"},
		"all": {"allOf": [{"type": "number"}, {"minimum": 0}]},
		"list": {"type": "array", "items": {"type": "integer"}},
		"tuple": {"type": "array", "prefixItems": [{"type": "boolean"}], "items": {"type": "number"}},
		"nested": {"type": "object", "properties": {"deep": {"type": "number"}}},
		"map": {"type": "object", "additionalProperties": {"type": "boolean"}},
		"pat": {"type": "object", "patternProperties": {"^n_": {"type": "integer"}}}
	},
	"required": ["need"],
	"$defs": {"n": {"type": "number"}}
}`

func TestCoerce(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, coerceSchema)
	tests := []struct {
		name, args, want string
		changes          []string
	}{
		{"integer", `{"count":"5"}`, `{"count":5}`, []string{`count: "5" → 5`}},
		{"integer canonical", `{"count":"1e3"}`, `{"count":1000}`, []string{`count: "1e3" → 1000`}},
		{"integer rejects fraction", `{"count":"2.5"}`, `{"count":"2.5"}`, nil},
		{"number with spaces", `{"ratio":" 2.50 "}`, `{"ratio":2.50}`, []string{`ratio: " 2.50 " → 2.50`}},
		{"not a number", `{"ratio":"2,5","count":"five"}`, `{"count":"five","ratio":"2,5"}`, nil},
		{"hex is not a number", `{"ratio":"0x10"}`, `{"ratio":"0x10"}`, nil},
		{"booleans", `{"on":"TRUE"}`, `{"on":true}`, []string{`on: "TRUE" → true`}},
		{"boolean false", `{"on":"false"}`, `{"on":false}`, []string{`on: "false" → false`}},
		{"not a boolean", `{"on":"yes"}`, `{"on":"yes"}`, nil},
		{"number to string", `{"id":12345678901234567890}`, `{"id":"12345678901234567890"}`, []string{`id: 12345678901234567890 → "12345678901234567890"`}},
		{"string allowed", `{"either":"5"}`, `{"either":"5"}`, nil},
		{"union left alone", `{"union":"5"}`, `{"union":"5"}`, nil},
		{"nullable keeps null", `{"maybe":null}`, `{"maybe":null}`, nil},
		{"nullable coerces", `{"maybe":"7"}`, `{"maybe":7}`, []string{`maybe: "7" → 7`}},
		{"optional null removed", `{"opt":null,"need":"x"}`, `{"need":"x"}`, []string{`opt: null removed (the property is optional)`}},
		{"required null kept", `{"need":null}`, `{"need":null}`, nil},
		{"reference", `{"ref":"1.5"}`, `{"ref":1.5}`, []string{`ref: "1.5" → 1.5`}},
		{"allOf", `{"all":"3"}`, `{"all":3}`, []string{`all: "3" → 3`}},
		{"items", `{"list":["1",2,"x"]}`, `{"list":[1,2,"x"]}`, []string{`list[0]: "1" → 1`}},
		{"tuple", `{"tuple":["true","2"]}`, `{"tuple":[true,2]}`, []string{`tuple[0]: "true" → true`, `tuple[1]: "2" → 2`}},
		{"nested", `{"nested":{"deep":"-4e-2"}}`, `{"nested":{"deep":-4e-2}}`, []string{`nested.deep: "-4e-2" → -4e-2`}},
		{"additionalProperties", `{"map":{"a b":"true"}}`, `{"map":{"a b":true}}`, []string{`map["a b"]: "true" → true`}},
		{"patternProperties", `{"pat":{"n_x":"9","other":"9"}}`, `{"pat":{"n_x":9,"other":"9"}}`, []string{`pat.n_x: "9" → 9`}},
		{"unknown property", `{"zzz":"5"}`, `{"zzz":"5"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := decode(t, tc.args).(map[string]any)
			changes := v.Coerce(args)
			if got := encode(t, args); got != tc.want {
				t.Errorf("coerced %s:\n got  %s\n want %s", tc.args, got, tc.want)
			}
			var got []string
			for _, c := range changes {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.changes, "\n") {
				t.Errorf("changes:\n got  %q\n want %q", got, tc.changes)
			}
		})
	}
}

// TestCoerceThenValidate: after coercion the arguments a weak model sent
// are valid, and what coercion could not fix is still reported.
func TestCoerceThenValidate(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, coerceSchema)
	args := decode(t, `{"need":"x","count":"3","on":"true","list":["1","2"],"opt":null}`).(map[string]any)
	if errs := v.Validate(args); len(errs) == 0 {
		t.Fatal("the raw arguments should not be valid")
	}
	if n := len(v.Coerce(args)); n != 5 {
		t.Errorf("%d coercions, want 5", n)
	}
	if errs := v.Validate(args); len(errs) > 0 {
		t.Errorf("still invalid after coercion: %v", errs)
	}
	bad := decode(t, `{"need":"x","count":"0"}`).(map[string]any)
	v.Coerce(bad)
	errs := v.Validate(bad)
	if len(errs) != 1 || errs[0].Path != "count" || !strings.Contains(errs[0].Message, "minimum") {
		t.Errorf("errors after coercing an out-of-range count: %v", errs)
	}
}

func TestCoerceRecursiveSchema(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, `{"type":"object","properties":{"n":{"type":"integer"},"next":{"$ref":"#"}}}`)
	args := decode(t, `{"n":"1","next":{"n":"2","next":{"n":"3"}}}`).(map[string]any)
	v.Coerce(args)
	if got, want := encode(t, args), `{"n":1,"next":{"n":2,"next":{"n":3}}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
