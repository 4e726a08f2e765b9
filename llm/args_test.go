package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestArgBufferPartialGrowsByteByByte(t *testing.T) {
	full := `{"path": "dir/a \"quoted\".txt", "lines": [1, 2, 3], "opts": {"deep": true}}`
	var b ArgBuffer
	var seen []map[string]any
	for i := 0; i < len(full); i++ {
		b.Write([]byte{full[i]})
		if p, ok := b.Partial(); ok {
			var m map[string]any
			if err := json.Unmarshal(p, &m); err != nil {
				t.Fatalf("partial after %d bytes is not an object: %v: %s", i+1, err, p)
			}
			seen = append(seen, m)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d partial parses for %d bytes", len(seen), len(full))
	}
	var grewPath bool
	for _, m := range seen {
		if p, _ := m["path"].(string); p != "" && p != `dir/a "quoted".txt` && strings.HasPrefix(`dir/a "quoted".txt`, p) {
			grewPath = true
		}
	}
	if !grewPath {
		t.Errorf("no partial showed the path growing: %v", seen)
	}
	out, _ := b.closed()
	var last map[string]any
	if err := json.Unmarshal(out, &last); err != nil || last["opts"].(map[string]any)["deep"] != true {
		t.Fatalf("closed text of the whole arguments = %s (%v)", out, err)
	}
}

func TestRepairArguments(t *testing.T) {
	cases := []struct {
		in, want, repair string
		ok               bool
	}{
		{``, `{}`, "", true},
		{` {"a":1} `, `{"a":1}`, "", true},
		{`"{\"a\":1}"`, `{"a":1}`, RepairString, true},
		{`{"a":[1,2,],}`, `{"a":[1,2]}`, RepairCommas, true},
		{`{"a":"hel`, `{"a":"hel"}`, RepairTruncate, true},
		{`{"a":{"b":[1`, `{"a":{"b":[1]}}`, RepairTruncate, true},
		{`{"a":1,"b`, `{"a":1}`, RepairDropped, true},
		{`{"a":1,}`, `{"a":1}`, RepairCommas, true},
		{`[1,2]`, `[1,2]`, "", false},
		{`not json`, `not json`, "", false},
	}
	for _, c := range cases {
		out, repair, ok := RepairArguments([]byte(c.in))
		if string(out) != c.want || repair != c.repair || ok != c.ok {
			t.Errorf("RepairArguments(%s) = %s, %q, %v; want %s, %q, %v", c.in, out, repair, ok, c.want, c.repair, c.ok)
		}
	}
}

// BenchmarkAssemble streams an argument of 10, 100 and 400 KB in 1-byte
// fragments, with the partial parses a UI gets; the time per byte stays
// flat (assembly is linear).
func BenchmarkAssemble(b *testing.B) {
	for _, kb := range []int{10, 100, 400} {
		b.Run(fmt.Sprintf("%dKB", kb), func(b *testing.B) {
			args := `{"content":"` + strings.Repeat("abcdefghij", kb*100) + `"}`
			for b.Loop() {
				a := newAssembler("p", "m", func(Event) {})
				a.callStart("0", "call_1", "write")
				for i := 0; i < len(args); i++ {
					a.callDelta("0", args[i:i+1])
				}
				a.done = true
				m := a.finish("", nil)
				if len(m.Content[0].Arguments) != len(args) {
					b.Fatal("arguments lost")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(args)), "ns/byte")
		})
	}
}
