package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// The fast path checks arguments straight from their JSON text, without
// decoding them, for schemas that use only the common keywords (types,
// properties, required, additionalProperties, enum, const, numeric bounds,
// string lengths, patterns, items, item counts, maxProperties). It only ever
// answers "certainly valid": anything it is unsure of — an unsupported
// keyword, an escaped string it would have to decode, a number too precise
// for float64 — sends the call to the full validator, which
// is the authority and writes the error report. So the fast path can be
// incomplete but never more lenient than the full validator.

// fastNode is a compiled schema node of the fast path.
type fastNode struct {
	types uint8 // bit set of jsonType; 0 means any

	props      map[string]*fastNode
	required   []string
	extraOK    bool      // additionalProperties absent or true
	extra      *fastNode // additionalProperties schema, when it is one
	maxProps   int       // -1: none; a duplicate key counts twice, which only errs on the safe side
	items      *fastNode
	minItems   int
	maxItems   int // -1: none
	enumStr    []string
	enumNum    []float64
	enumBool   uint8 // bit 1: true allowed, bit 2: false allowed
	enumNull   bool
	hasEnum    bool
	minLength  int
	maxLength  int // -1: none
	pattern    *regexp.Regexp
	min, max   float64 // bounds, ±Inf when absent
	exMin      bool    // min is exclusive
	exMax      bool    // max is exclusive
	strictNums bool    // has numeric bounds or an enum
}

type jsonType uint8

const (
	tNull jsonType = 1 << iota
	tBool
	tInteger
	tNumber // any number, integer or not
	tString
	tArray
	tObject
)

// annotation keywords the fast path may ignore: they never fail validation.
var annotations = map[string]bool{
	"$schema": true, "$comment": true, "title": true, "description": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$id": true, "contentMediaType": true, "contentEncoding": true, "markdownDescription": true,
	// Definitions only matter through $ref, which the fast path does not support.
	"$defs": true, "definitions": true,
}

// compileFast compiles a schema document (as decoded JSON) for the fast path,
// or returns nil when it uses anything the fast path does not support.
func compileFast(doc any) *fastNode {
	switch d := doc.(type) {
	case bool:
		if d {
			return &fastNode{extraOK: true, maxProps: -1, maxItems: -1, maxLength: -1, min: math.Inf(-1), max: math.Inf(1)}
		}
		return nil
	case map[string]any:
		return compileFastObject(d)
	}
	return nil
}

func compileFastObject(m map[string]any) *fastNode {
	n := &fastNode{extraOK: true, maxProps: -1, maxItems: -1, maxLength: -1, min: math.Inf(-1), max: math.Inf(1)}
	for k, v := range m {
		if annotations[k] {
			continue
		}
		var ok bool
		switch k {
		case "type":
			ok = n.setTypes(v)
		case "properties":
			ok = n.setProperties(v)
		case "required":
			ok = n.setRequired(v)
		case "additionalProperties":
			switch a := v.(type) {
			case bool:
				n.extraOK, ok = a, true
			case map[string]any:
				n.extra = compileFastObject(a)
				n.extraOK, ok = false, n.extra != nil
			}
		case "items":
			if _, isArray := v.([]any); !isArray {
				n.items = compileFast(v)
				ok = n.items != nil
			}
		case "enum":
			ok = n.setEnum(v)
		case "const":
			ok = n.setEnum([]any{v})
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			ok = n.setBound(k, v)
		case "minLength":
			n.minLength, ok = count(v)
		case "maxLength":
			n.maxLength, ok = count(v)
		case "minItems":
			n.minItems, ok = count(v)
		case "maxItems":
			n.maxItems, ok = count(v)
		case "maxProperties":
			n.maxProps, ok = count(v)
		case "pattern":
			if s, isStr := v.(string); isStr {
				re, err := regexp.Compile(s)
				// A pattern Go cannot compile is not enforced (see lenientRegexp).
				n.pattern, ok = re, true
				if err != nil {
					n.pattern = nil
				}
			}
		}
		if !ok {
			return nil
		}
	}
	if len(n.required) > 64 {
		return nil
	}
	return n
}

func (n *fastNode) setTypes(v any) bool {
	add := func(name any) bool {
		switch name {
		case "null":
			n.types |= uint8(tNull)
		case "boolean":
			n.types |= uint8(tBool)
		case "integer":
			n.types |= uint8(tInteger)
		case "number":
			n.types |= uint8(tNumber | tInteger)
		case "string":
			n.types |= uint8(tString)
		case "array":
			n.types |= uint8(tArray)
		case "object":
			n.types |= uint8(tObject)
		default:
			return false
		}
		return true
	}
	if list, ok := v.([]any); ok {
		for _, t := range list {
			if !add(t) {
				return false
			}
		}
		return len(list) > 0
	}
	return add(v)
}

func (n *fastNode) setProperties(v any) bool {
	props, ok := v.(map[string]any)
	if !ok {
		return false
	}
	n.props = make(map[string]*fastNode, len(props))
	for name, p := range props {
		c := compileFast(p)
		if c == nil {
			return false
		}
		n.props[name] = c
	}
	return true
}

func (n *fastNode) setRequired(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, r := range list {
		s, ok := r.(string)
		if !ok {
			return false
		}
		n.required = append(n.required, s)
	}
	return true
}

func (n *fastNode) setEnum(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	n.hasEnum, n.strictNums = true, true
	for _, e := range list {
		switch e := e.(type) {
		case string:
			n.enumStr = append(n.enumStr, e)
		case json.Number:
			f, err := strconv.ParseFloat(string(e), 64)
			if err != nil || !exactFloat(string(e)) {
				return false
			}
			n.enumNum = append(n.enumNum, f)
		case bool:
			if e {
				n.enumBool |= 1
			} else {
				n.enumBool |= 2
			}
		case nil:
			n.enumNull = true
		default: // arrays and objects: leave to the full validator
			return false
		}
	}
	return true
}

func (n *fastNode) setBound(k string, v any) bool {
	num, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || !exactFloat(string(num)) {
		return false
	}
	switch k {
	case "minimum":
		if f > n.min || n.exMin && f == n.min {
			n.min, n.exMin = f, false
		}
	case "maximum":
		if f < n.max || n.exMax && f == n.max {
			n.max, n.exMax = f, false
		}
	case "exclusiveMinimum":
		if f >= n.min {
			n.min, n.exMin = f, true
		}
	case "exclusiveMaximum":
		if f <= n.max {
			n.max, n.exMax = f, true
		}
	}
	n.strictNums = true
	return true
}

func count(v any) (int, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(num))
	return i, err == nil && i >= 0
}

// exactFloat reports whether a number literal has few enough significant
// digits that float64 holds it exactly.
func exactFloat(lit string) bool {
	digits := 0
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c == 'e' || c == 'E' {
			exp, err := strconv.Atoi(lit[i+1:])
			return err == nil && exp > -300 && exp < 300 && digits <= 15
		}
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return digits <= 15
}

// fastMaxDepth bounds nesting on the fast path; deeper input goes to the full
// validator.
const fastMaxDepth = 64

// checker walks JSON text against a fastNode tree.
type checker struct {
	b          []byte
	i          int
	bad        bool // unsure or invalid
	undeclared bool // a property name the schema does not declare was seen
}

// check reports whether raw, the JSON text of arguments, is certainly valid
// against n, and whether every property name in it is declared by the schema
// (where the schema constrains the object at all).
func (n *fastNode) check(raw []byte) (valid, declared bool) {
	c := checker{b: raw}
	c.value(n, 0)
	c.space()
	valid = !c.bad && c.i == len(c.b)
	return valid, valid && !c.undeclared
}

func (c *checker) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *checker) fail() { c.bad = true }

func (n *fastNode) allows(t jsonType) bool { return n.types == 0 || n.types&uint8(t) != 0 }

// value checks one JSON value against n (nil n: any value, syntax only).
func (c *checker) value(n *fastNode, depth int) {
	if depth > fastMaxDepth {
		c.fail()
		return
	}
	c.space()
	if c.i >= len(c.b) {
		c.fail()
		return
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		c.object(n, depth)
	case ch == '[':
		c.array(n, depth)
	case ch == '"':
		c.stringValue(n)
	case ch == 't':
		c.literal("true", n, tBool, 1)
	case ch == 'f':
		c.literal("false", n, tBool, 2)
	case ch == 'n':
		c.literal("null", n, tNull, 0)
	case ch == '-' || ch >= '0' && ch <= '9':
		c.number(n)
	default:
		c.fail()
	}
}

func (c *checker) literal(word string, n *fastNode, t jsonType, boolBit uint8) {
	if !bytes.HasPrefix(c.b[c.i:], []byte(word)) {
		c.fail()
		return
	}
	c.i += len(word)
	if n == nil {
		return
	}
	if !n.allows(t) {
		c.fail()
		return
	}
	if n.hasEnum {
		if t == tNull && !n.enumNull || t == tBool && n.enumBool&boolBit == 0 {
			c.fail()
		}
	}
}

func (c *checker) object(n *fastNode, depth int) {
	c.i++ // {
	if n != nil && (!n.allows(tObject) || n.hasEnum) {
		c.fail()
		return
	}
	var seen uint64 // required properties seen, by index
	keys := 0
	c.space()
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
	} else {
		for !c.bad {
			c.space()
			key, escaped, ok := c.rawString()
			if !ok || escaped {
				c.fail() // escaped keys are rare: leave them to the full validator
				return
			}
			keys++
			c.space()
			if c.i >= len(c.b) || c.b[c.i] != ':' {
				c.fail()
				return
			}
			c.i++
			var child *fastNode
			if n != nil {
				if p, ok := n.props[key]; ok {
					child = p
					for ri, r := range n.required {
						if r == key {
							seen |= 1 << ri
						}
					}
				} else if n.extra != nil {
					child = n.extra
					c.undeclared = c.undeclared || n.props != nil
				} else if !n.extraOK {
					c.fail()
					return
				} else {
					c.undeclared = c.undeclared || n.props != nil
				}
			}
			c.value(child, depth+1)
			c.space()
			if c.i >= len(c.b) {
				c.fail()
				return
			}
			if c.b[c.i] == ',' {
				c.i++
				continue
			}
			if c.b[c.i] == '}' {
				c.i++
				break
			}
			c.fail()
			return
		}
	}
	if n == nil || c.bad {
		return
	}
	if len(n.required) > 0 && seen != 1<<len(n.required)-1 ||
		n.maxProps >= 0 && keys > n.maxProps {
		c.fail()
	}
}

func (c *checker) array(n *fastNode, depth int) {
	c.i++ // [
	if n != nil && (!n.allows(tArray) || n.hasEnum) {
		c.fail()
		return
	}
	var items *fastNode
	if n != nil {
		items = n.items
	}
	count := 0
	c.space()
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
	} else {
		for !c.bad {
			c.value(items, depth+1)
			count++
			c.space()
			if c.i >= len(c.b) {
				c.fail()
				return
			}
			if c.b[c.i] == ',' {
				c.i++
				continue
			}
			if c.b[c.i] == ']' {
				c.i++
				break
			}
			c.fail()
			return
		}
	}
	if n != nil && (count < n.minItems || n.maxItems >= 0 && count > n.maxItems) {
		c.fail()
	}
}

// rawString scans a string at c.i and returns its raw bytes (between the
// quotes, aliasing c.b), whether it holds escapes, and whether it is well formed.
func (c *checker) rawString() (string, bool, bool) {
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		return "", false, false
	}
	c.i++
	start := c.i
	escaped := false
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			s := c.b[start:c.i]
			c.i++
			if !utf8.Valid(s) {
				return "", false, false
			}
			return unsafe.String(unsafe.SliceData(s), len(s)), escaped, true
		case ch == '\\':
			escaped = true
			if c.i+1 >= len(c.b) {
				return "", false, false
			}
			switch c.b[c.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.i += 2
			case 'u':
				if c.i+6 > len(c.b) || !isHex4(c.b[c.i+2:c.i+6]) {
					return "", false, false
				}
				c.i += 6
			default:
				return "", false, false
			}
		case ch < 0x20:
			return "", false, false
		default:
			c.i++
		}
	}
	return "", false, false
}

func isHex4(b []byte) bool {
	for _, ch := range b {
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F') {
			return false
		}
	}
	return true
}

func (c *checker) stringValue(n *fastNode) {
	s, escaped, ok := c.rawString()
	if !ok {
		c.fail()
		return
	}
	if n == nil {
		return
	}
	if !n.allows(tString) {
		c.fail()
		return
	}
	constrained := n.hasEnum || n.pattern != nil || n.minLength > 0 || n.maxLength >= 0
	if !constrained {
		return
	}
	if escaped {
		c.fail() // would need decoding: leave it to the full validator
		return
	}
	if n.hasEnum {
		found := false
		for _, e := range n.enumStr {
			if e == s {
				found = true
				break
			}
		}
		if !found {
			c.fail()
			return
		}
	}
	if n.minLength > 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if l < n.minLength || n.maxLength >= 0 && l > n.maxLength {
			c.fail()
			return
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		c.fail()
	}
}

func (c *checker) number(n *fastNode) {
	start := c.i
	integer := true
	if c.b[c.i] == '-' {
		c.i++
	}
	digits := c.digits()
	if digits == 0 || digits > 1 && c.b[c.i-digits] == '0' {
		c.fail() // no digits, or a leading zero
		return
	}
	sig := digits
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		d := c.digits()
		if d == 0 {
			c.fail()
			return
		}
		sig += d
		integer = false
	}
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if c.digits() == 0 {
			c.fail()
			return
		}
		integer = false
	}
	if n == nil {
		return
	}
	if integer {
		if !n.allows(tInteger) {
			c.fail()
			return
		}
	} else if n.types != 0 && n.types&uint8(tNumber) == 0 {
		c.fail() // maybe an integer written as 1.0 or 1e2: the full validator decides
		return
	}
	if !n.strictNums {
		return
	}
	if sig > 15 || !integer && c.i-start > 24 {
		c.fail() // too precise for float64
		return
	}
	lit := c.b[start:c.i]
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(lit), len(lit)), 64)
	if err != nil {
		c.fail()
		return
	}
	if f < n.min || n.exMin && f == n.min || f > n.max || n.exMax && f == n.max {
		c.fail()
		return
	}
	if n.hasEnum {
		for _, e := range n.enumNum {
			if e == f {
				return
			}
		}
		c.fail()
	}
}

func (c *checker) digits() int {
	start := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
	}
	return c.i - start
}
