package jsonscan

import (
	"slices"
	"testing"
)

func TestBrackets(t *testing.T) {
	b := []byte(`{"a":"[{\"}",  "b":[1,{"c":"\\"}]}`)
	var got []byte
	var at []int
	for i, c := range Brackets(b) {
		got, at = append(got, c), append(at, i)
	}
	if string(got) != "{[{}]}" {
		t.Errorf("brackets %q at %v", got, at)
	}
	for k, i := range at {
		if b[i] != got[k] {
			t.Errorf("index %d holds %q, not %q", i, b[i], got[k])
		}
	}
	// Stopping early stops the walk.
	n := 0
	for range Brackets(b) {
		n++
		break
	}
	if n != 1 || !slices.Equal(got[:1], []byte("{")) {
		t.Errorf("early stop: %d", n)
	}
}

func TestDeeper(t *testing.T) {
	for _, c := range []struct {
		json  string
		limit int
		want  bool
	}{
		{`{}`, 1, false},
		{`{"a":[{}]}`, 2, true},
		{`{"a":[{}]}`, 3, false},
		{`{"a":"[[[[[["}`, 1, false},
		{`]]]][[`, 1, true},
		{`]]]][`, 1, false},
		{`"{\"[{"`, 0, false},
	} {
		if got := Deeper([]byte(c.json), c.limit); got != c.want {
			t.Errorf("Deeper(%s, %d) = %v, want %v", c.json, c.limit, got, c.want)
		}
	}
}
