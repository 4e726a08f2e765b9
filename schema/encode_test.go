package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// viaEncodingJSON is what Encode wrote before it had its own encoder.
func viaEncodingJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// sameEncoding fails the test unless Encode(v) gives encoding/json's
// bytes, or an error where it gives one.
func sameEncoding(t *testing.T, what string, v any) {
	t.Helper()
	want, wantErr := viaEncodingJSON(v)
	got, err := Encode(v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", what, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n%s\nencoding/json writes\n%s", what, got, want)
	}
}

// TestEncodeIsEncodingJSON: Encode writes encoding/json's bytes (HTML
// characters not escaped) for every corpus schema, raw and compiled for
// every dialect with its report, and for the values its own encoder leaves
// to encoding/json — and it does write most compiled schemas itself.
func TestEncodeIsEncodingJSON(t *testing.T) {
	t.Parallel()
	fast, all := 0, 0
	for _, ct := range loadCorpus(t) {
		sameEncoding(t, ct.Server+"/"+ct.Name, ct.Doc)
		for _, d := range testDialects() {
			out, report := d.Compile(ct.Doc)
			sameEncoding(t, ct.Server+"/"+ct.Name+" "+d.Name(), out)
			sameEncoding(t, ct.Server+"/"+ct.Name+" "+d.Name()+" report", report)
			all++
			if _, ok := appendJSON(nil, out, 0); ok {
				fast++
			}
		}
	}
	if fast < all*9/10 {
		t.Errorf("the own encoder wrote %d of %d compiled schemas", fast, all)
	}
	deep := any("x")
	for range maxFastDepth + 5 {
		deep = []any{map[string]any{"k": deep}}
	}
	for name, v := range map[string]any{
		"nil map":            map[string]any(nil),
		"nil list":           []any(nil),
		"empty":              map[string]any{},
		"empty list":         []any{},
		"null":               nil,
		"bools":              []any{true, false},
		"html":               "<b> & </b>",
		"escapes":            "quote \" backslash \\ newline \n return \r tab \t",
		"controls":           "bell \a backspace \b formfeed \f nul \x00 esc \x1b del \x7f",
		"separators":         "line \u2028 paragraph \u2029",
		"invalid utf-8":      "a\xffb\xc3",
		"unicode":            "naïve — 日本語 🙂",
		"keys":               map[string]any{"b": 1.0, "a": "x", "\"q\"": nil, "é": true, "\n": []any{}, "A": 2.0, "\xff": 1.0},
		"numbers":            []any{json.Number("0"), json.Number("-1.50"), json.Number("1e10"), json.Number("1E-7"), json.Number(""), json.Number("12345678901234567890")},
		"bad number":         json.Number("01"),
		"not a number":       json.Number("abc"),
		"floats":             []any{0.0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, 123456789.0, math.MaxFloat64},
		"NaN":                map[string]any{"x": math.NaN()},
		"ints":               []any{1, int64(-2), uint8(3)},
		"typed":              map[string]any{"s": []string{"a"}, "m": map[string]string{"k": "<v>"}},
		"deep":               deep,
		"nested after fails": map[string]any{"a": []any{"ok", "\x01"}, "b": "fine"},
	} {
		sameEncoding(t, name, v)
	}
}

// FuzzEncode: for any JSON text, decoded as Decode decodes it, Encode
// writes encoding/json's bytes.
func FuzzEncode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add(`{"a":"\u2028\u0001\"\\\n","b":[1e5,-0.0,1.0E+2,null,true],"c":{"\u00e9":{}}}`)
	f.Fuzz(func(t *testing.T, text string) {
		v, err := Decode([]byte(text))
		if err != nil {
			return
		}
		sameEncoding(t, strings.ToValidUTF8(text, "?"), v)
	})
}
