package jsonscan

import (
	"os"
	"path/filepath"
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

// bytewise is Brackets as it was written first, byte by byte: the
// reference the faster scan must follow.
func bytewise(b []byte) (at []int) {
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[' || c == '}' || c == ']':
			at = append(at, i)
		}
	}
	return at
}

func scanned(b []byte) (at []int) {
	for i, c := range Brackets(b) {
		if b[i] != c {
			panic("Brackets yielded a byte that is not at its index")
		}
		at = append(at, i)
	}
	return at
}

var bracketCases = []string{
	``, `"`, `"\`, `"\"`, `"\\"`, `"\\\"`, `"\\\\"[`, `{"a\\\\\"[":"]"}`,
	`{"a":"[{\"}",  "b":[1,{"c":"\\"}]}`, `["\\\\\\", "]", [], {}]`,
	`{"unclosed": "[{`, `]]}}[[{{`, `"a"b"c"[`, `\"[`, `"\\\"\\"]`,
	"{\"t\":\"tab\tand é \\u005c\"}[",
}

// TestBracketsAsByteByByte: the scan that skips strings with IndexByte
// finds the brackets the byte-by-byte scan finds, on odd strings and on
// every tool list of the corpus.
func TestBracketsAsByteByByte(t *testing.T) {
	inputs := bracketCases
	for _, dir := range []string{"../../testdata/mcp-tools", "../../schema/testdata/corpus"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no corpus in %s", dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, string(b))
		}
	}
	for _, in := range inputs {
		if got, want := scanned([]byte(in)), bytewise([]byte(in)); !slices.Equal(got, want) {
			t.Errorf("%.80q: brackets at %v, byte by byte %v", in, got, want)
		}
		// Every cut of a short input: strings left open, escapes cut.
		if len(in) < 64 {
			for n := range len(in) {
				if got, want := scanned([]byte(in[:n])), bytewise([]byte(in[:n])); !slices.Equal(got, want) {
					t.Errorf("%q: brackets at %v, byte by byte %v", in[:n], got, want)
				}
			}
		}
	}
}

func FuzzBrackets(f *testing.F) {
	for _, c := range bracketCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanned(b), bytewise(b); !slices.Equal(got, want) {
			t.Errorf("%q: brackets at %v, byte by byte %v", b, got, want)
		}
	})
}
