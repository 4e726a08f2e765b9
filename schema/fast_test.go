package schema

import (
	"bytes"
	"encoding/json"
	"testing"
)

// fastSchemas are schemas the fast path supports, used by the table test and
// the fuzzer.
var fastSchemas = []string{
	editSchema,
	`{"type":"object","properties":{
		"n":{"type":"integer","minimum":1,"maximum":10},
		"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-zé]+$"},
		"e":{"enum":["a",1,true,null]},
		"c":{"const":"k"},
		"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2},
		"m":{"type":"object","additionalProperties":{"type":"integer"},"maxProperties":2},
		"t":{"type":["string","null"]},
		"any":{}
	},"required":["n"]}`,
	`{"type":"object","properties":{"deep":{"type":"object","properties":{"deeper":{"type":"object","properties":{"v":{"type":"boolean"}},"required":["v"]}}}}}`,
}

func TestFastPathSupport(t *testing.T) {
	t.Parallel()
	for _, src := range fastSchemas {
		if mustCompile(t, src).fast == nil {
			t.Errorf("fast path does not support %s", src)
		}
	}
	for _, src := range []string{
		`{"anyOf":[{"type":"string"}]}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{}}}`,
		`{"type":"object","properties":{"u":{"type":"string","format":"uri"}}}`,
		`{"type":"array","uniqueItems":true}`,
		`{"type":"number","multipleOf":3}`,
		`{"type":"object","minProperties":1}`,
		`{"type":"object","patternProperties":{"^x":{}}}`,
		`{"enum":[[1]]}`,
		`false`,
	} {
		if mustCompile(t, src).fast != nil {
			t.Errorf("fast path claims to support %s", src)
		}
	}
}

func TestFastPathAgreesWithFullValidator(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, fastSchemas[1])
	for _, tc := range []struct {
		args string
		fast bool // what the fast path must answer
	}{
		{`{"n":1}`, true},
		{` { "n" : 10 } `, true},
		{`{"n":0}`, false},
		{`{"n":11}`, false},
		{`{"n":1.5}`, false},
		{`{"n":1.0}`, false}, // an integer written as 1.0: the full validator decides
		{`{}`, false},
		{`{"n":1,"x":0.5}`, true},
		{`{"n":1,"x":0}`, false},
		{`{"n":1,"x":1}`, false},
		{`{"n":1,"s":"ab"}`, true},
		{`{"n":1,"s":"éé"}`, true},
		{`{"n":1,"s":"a"}`, false},
		{`{"n":1,"s":"abcde"}`, false},
		{`{"n":1,"s":"AB"}`, false},
		{`{"n":1,"s":"a\u0062"}`, false}, // escaped: unsure
		{`{"n":1,"e":"a"}`, true},
		{`{"n":1,"e":1}`, true},
		{`{"n":1,"e":true}`, true},
		{`{"n":1,"e":null}`, true},
		{`{"n":1,"e":false}`, false},
		{`{"n":1,"e":2}`, false},
		{`{"n":1,"e":"b"}`, false},
		{`{"n":1,"e":{}}`, false},
		{`{"n":1,"c":"k"}`, true},
		{`{"n":1,"c":"j"}`, false},
		{`{"n":1,"l":["a"]}`, true},
		{`{"n":1,"l":[]}`, false},
		{`{"n":1,"l":["a","b","c"]}`, false},
		{`{"n":1,"l":[1]}`, false},
		{`{"n":1,"m":{"a":1,"b":2}}`, true},
		{`{"n":1,"m":{"a":1,"b":2,"c":3}}`, false},
		{`{"n":1,"m":{"a":"x"}}`, false},
		{`{"n":1,"t":null}`, true},
		{`{"n":1,"t":1}`, false},
		{`{"n":1,"any":[{"x":[1,2,{"y":null}]}]}`, true},
		{`{"n":1,"unknown":true}`, true}, // additionalProperties is open here
		{`{"n":1}x`, false},
		{`{"n":1,}`, false},
		{`{"n":01}`, false},
		{`{"n":1,"s":"a` + "\x00" + `b"}`, false},
		{`{"n":1,"n":0}`, false}, // duplicate key: each value is checked
		{`{"n":12345678901234567890}`, false},
		{`{"n":1,"s":"\ud800"}`, false},
	} {
		got := v.Accepts([]byte(tc.args))
		if got != tc.fast {
			t.Errorf("Accepts(%s) = %v, want %v", tc.args, got, tc.fast)
		}
		if got {
			checkFullAccepts(t, v, []byte(tc.args))
		}
	}
}

func TestFastPathClosedObjects(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, editSchema)
	for _, tc := range []struct {
		args string
		fast bool
	}{
		{`{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`, true},
		{`{"path":"a","edits":[{"oldText":"x","newText":"y","replaceAll":true}],"mode":"safe"}`, true},
		{`{"path":"a","edits":[{"oldText":"x","newText":"y","extra":1}]}`, false},
		{`{"path":"a","edits":[{"oldText":"x"}]}`, false},
		{`{"path":"a","edits":[],"x":1}`, false},
		{`{"path":"a","edits":[{"oldText":"line\n","newText":"\"q\" \u00e9"}]}`, true}, // escapes in unconstrained strings are fine
		{`{"path":"a\nb","edits":[]}`, false},                                          // escapes in a constrained string: unsure
	} {
		if got := v.Accepts([]byte(tc.args)); got != tc.fast {
			t.Errorf("Accepts(%s) = %v, want %v", tc.args, got, tc.fast)
		}
	}
}

// checkFullAccepts fails the test when the full validator rejects raw, which
// the fast path accepted.
func checkFullAccepts(t *testing.T, v *Validator, raw []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args any
	if err := dec.Decode(&args); err != nil {
		t.Fatalf("fast path accepted malformed JSON %q: %v", raw, err)
	}
	if dec.More() {
		t.Fatalf("fast path accepted trailing data in %q", raw)
	}
	if errs := v.Validate(args); errs != nil {
		t.Fatalf("fast path accepted %s, full validator rejects: %v", raw, errs)
	}
}

// FuzzFastPathSound checks that the fast path never accepts what the full
// validator rejects, nor malformed JSON.
func FuzzFastPathSound(f *testing.F) {
	for _, s := range []string{
		`{"n":1}`, `{"n":5,"s":"abc","l":["x"],"m":{"a":1}}`, `{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`,
		`{"deep":{"deeper":{"v":true}}}`, `{"n":1,"e":null,"t":"x","x":0.25}`, `{"n":1,"any":{"a":[1,"2",{"3":null}]}}`,
	} {
		f.Add(s)
	}
	var validators []*Validator
	for _, src := range fastSchemas {
		validators = append(validators, mustCompile(f, src))
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, v := range validators {
			if v.Accepts([]byte(raw)) {
				checkFullAccepts(t, v, []byte(raw))
			}
		}
	})
}

func BenchmarkAcceptsFiveFields(b *testing.B) {
	v := mustCompile(b, `{"type":"object","properties":{
		"path":{"type":"string","minLength":1},"offset":{"type":"integer","minimum":1},
		"limit":{"type":"integer","maximum":10000},"mode":{"type":"string","enum":["text","lines"]},
		"numbers":{"type":"boolean"}},"required":["path"]}`)
	raw := compact(b, `{"path":"src/main.go","offset":10,"limit":200,"mode":"lines","numbers":true}`)
	b.ReportAllocs()
	for b.Loop() {
		if !v.Accepts(raw) {
			b.Fatal("rejected")
		}
	}
}

func TestQuickReportsUndeclaredNames(t *testing.T) {
	t.Parallel()
	v := mustCompile(t, fastSchemas[1])
	for _, tc := range []struct {
		args            string
		valid, declared bool
	}{
		{`{"n":1}`, true, true},
		{`{"n":1,"filePath":"x"}`, true, false},
		{`{"n":1,"m":{"anything":1}}`, true, true}, // a map's keys are not property names
		{`{"n":1,"any":{"free":{"form":1}}}`, true, true},
		{`{"n":0,"x":1}`, false, false},
	} {
		valid, declared := v.Quick([]byte(tc.args))
		if valid != tc.valid || declared != tc.declared {
			t.Errorf("Quick(%s) = %v, %v; want %v, %v", tc.args, valid, declared, tc.valid, tc.declared)
		}
	}
}
