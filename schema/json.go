package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	gschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/internal/textclip"
)

// The compiler works on the generic JSON form of a schema — objects as
// map[string]any, arrays as []any, numbers as json.Number — so that no
// keyword is lost, known or not.

// Decode decodes JSON text into the generic form the compiler works on,
// keeping numbers exact (json.Number). Text after the value is an error.
func Decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// FromSchema returns s in the generic JSON form. A nil schema is nil, which
// compiles to an object without properties.
func FromSchema(s *gschema.Schema) (any, error) {
	if v, ok := fromSchema(s); ok {
		return v, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding schema: %w", err)
	}
	return Decode(b)
}

// Encode returns v as compact JSON, object keys sorted, HTML characters not
// escaped: the same schema always encodes to the same bytes.
func Encode(v any) ([]byte, error) {
	if b, ok := appendJSON(make([]byte, 0, 1024), v, 0); ok {
		return b, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// equal reports whether two generic JSON values are the same JSON, numbers
// compared by value.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equal(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, bool, string:
		return a == b
	}
	ra, oka := rat(a)
	rb, okb := rat(b)
	return oka && okb && ra.Cmp(rb) == 0
}

// rat returns a JSON number as an exact rational.
func rat(v any) (*big.Rat, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = string(n)
	case float64:
		s = strconv.FormatFloat(n, 'g', -1, 64)
	case int:
		s = strconv.Itoa(n)
	default:
		return nil, false
	}
	if len(s) > 400 { // refuse huge exponents and digit strings
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if e, err := strconv.Atoi(s[i+1:]); err != nil || e > 400 || e < -400 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// isNumber reports whether v is a JSON number.
func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, int:
		return true
	}
	return false
}

// valueType returns the JSON type name of a generic value: "null",
// "boolean", "integer", "number", "string", "array" or "object".
func valueType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return "integer"
		}
	}
	if r, ok := rat(v); ok && r.IsInt() {
		return "integer"
	}
	return "number"
}

// literal renders a value for a description: strings quoted, other JSON
// as compact JSON, cut at 80 bytes.
func literal(v any) string {
	// The values descriptions quote most are plain strings, numbers and
	// booleans: written as Encode writes them, without an encoder.
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case string:
		if plainASCII(x) {
			return textclip.Clip(`"`+x+`"`, 80)
		}
	case json.Number:
		if simpleNumber(string(x)) {
			return textclip.Clip(string(x), 80)
		}
	}
	// Encode's room is for a schema; a literal is most often a short
	// list or object (a default of [] or {}).
	if b, ok := appendJSON(make([]byte, 0, 64), v, 0); ok {
		return textclip.Clip(string(b), 80)
	}
	b, err := Encode(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return textclip.Clip(string(b), 80)
}

// plainASCII reports whether JSON writes s as it is between quotes:
// printable ASCII without a quote or a backslash.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// simpleNumber reports whether s is a JSON number without an exponent,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?, which JSON writes as it is.
func simpleNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if intPart == "" || intPart[0] == '0' && len(intPart) > 1 || !allDigits(intPart) {
		return false
	}
	return !hasFrac || frac != "" && allDigits(frac)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sortedKeys returns a map's keys in sorted order, so that everything the
// compiler derives from a map is deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
