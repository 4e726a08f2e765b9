// Package schema validates tool arguments against JSON Schema and compiles
// tool schemas into the dialect each model provider accepts.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/internal/jsonschema"
	"github.com/toolbelt/toolbelt/internal/jsonschema/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validator checks arguments against one compiled schema. It is safe for
// concurrent use; compile once per schema and keep it.
type Validator struct {
	compiled *jsonschema.Schema
	doc      any       // the schema as decoded, to word errors from
	fast     *fastNode // nil when the schema needs the full validator
}

// Compile compiles s for validation. A nil schema accepts any object.
// References are resolved only inside s (#/$defs/…): remote and file
// references are refused, never fetched.
func Compile(s *gschema.Schema) (*Validator, error) {
	if s == nil {
		return CompileJSON([]byte(`{"type":"object"}`))
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding schema: %w", err)
	}
	return CompileJSON(b)
}

// CompileDoc compiles a schema given in its generic JSON form (see
// [Decode]): [Compile] of the schema that form stands for, without
// converting it to a [gschema.Schema] first.
func CompileDoc(doc any) (*Validator, error) {
	b, err := Encode(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding schema: %w", err)
	}
	return CompileJSON(b)
}

// resourceURL is where a compiled schema lives; relative references resolve
// against it and are refused by the loader.
const resourceURL = "toolbelt:///parameters.json"

// CompileJSON compiles a schema given as JSON text.
func CompileJSON(b []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if obj, ok := doc.(map[string]any); ok {
		if id, ok := obj["$schema"].(string); ok && !knownDraft(id) {
			delete(obj, "$schema") // an unknown meta-schema is not fetched
		}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(lenientRegexp)
	c.AssertFormat()
	c.TrustMeta(metaValid)
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile(resourceURL)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	return &Validator{compiled: compiled, doc: doc, fast: compileFast(doc)}, nil
}

// Accepts reports whether raw, the JSON text of arguments, is certainly
// valid, checking it without decoding it. False means "call Validate": the
// arguments are invalid or the quick check could not decide.
func (v *Validator) Accepts(raw []byte) bool {
	valid, _ := v.Quick(raw)
	return valid
}

// Quick is Accepts that also reports whether every property name in raw is
// one the schema declares — false when an object the schema describes with
// properties carries other names, which may be misspellings of them.
func (v *Validator) Quick(raw []byte) (valid, declared bool) {
	if v.fast == nil {
		return false, false
	}
	return v.fast.check(raw)
}

func knownDraft(id string) bool {
	id = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(id, "https://"), "http://"), "#")
	switch id {
	case "json-schema.org/draft-04/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-07/schema",
		"json-schema.org/draft/2019-09/schema", "json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// refusingLoader refuses every URL: only references inside the schema itself
// are resolved.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("reference %q is not fetched: only references inside the schema (#/$defs/…) are allowed", url)
}

// lenientRegexp compiles patterns with Go's regexp. A pattern Go cannot
// compile (ECMAScript lookaround, backreferences) is not enforced rather than
// making the whole tool unusable.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return anyString(s), nil
	}
	return re, nil
}

type anyString string

func (anyString) MatchString(string) bool { return true }
func (a anyString) String() string        { return string(a) }

// Error is one way the arguments violate the schema.
type Error struct {
	// Path locates the offending value: "edits[0].oldText"; "" is the root.
	Path string `json:"path"`
	// Message says what is wrong, with got/want wording.
	Message string `json:"message"`
	// Missing lists the required properties that are absent, when that is
	// the error.
	Missing []string `json:"missing,omitempty"`
	// Location is Path as the keys and indexes it is made of, for a
	// program that finds the value in its own form of the document.
	Location []string `json:"-"`
}

// String renders the error as "<path>: <message>", "(root)" for the root.
func (e Error) String() string {
	p := e.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + e.Message
}

var printer = message.NewPrinter(language.English)

// Validate checks args (as decoded by encoding/json, numbers as float64 or
// json.Number) and returns every violation, sorted by path; nil when args are
// valid.
func (v *Validator) Validate(args any) []Error {
	err := v.compiled.Validate(args)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Error{{Message: err.Error()}}
	}
	var out []Error
	v.collect(ve, args, &out)
	slices.SortStableFunc(out, func(a, b Error) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b Error) bool { return a.Path == b.Path && a.Message == b.Message })
}

// collect flattens a validation error tree into out. A failed anyOf/oneOf
// becomes one error listing what each alternative needed.
func (v *Validator) collect(e *jsonschema.ValidationError, root any, out *[]Error) {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(e.Causes) > 0 {
			var alts []string
			for _, c := range e.Causes {
				var sub []Error
				v.collect(c, root, &sub)
				for _, s := range sub {
					msg := s.Message
					if rel := strings.TrimPrefix(strings.TrimPrefix(s.Path, instancePath(e.InstanceLocation, root)), "."); rel != "" {
						msg = rel + ": " + msg
					}
					alts = append(alts, msg)
				}
			}
			slices.Sort(alts)
			alts = slices.Compact(alts)
			*out = append(*out, Error{
				Path:     instancePath(e.InstanceLocation, root),
				Location: e.InstanceLocation,
				Message:  "matches none of the allowed forms (" + strings.Join(alts, "; or ") + ")",
			})
			return
		}
		*out = append(*out, Error{Path: instancePath(e.InstanceLocation, root), Location: e.InstanceLocation, Message: k.LocalizedString(printer)})
		return
	}
	if len(e.Causes) == 0 {
		if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			slices.Sort(ap.Properties) // they come in map order
		}
		err := Error{Path: instancePath(e.InstanceLocation, root), Location: e.InstanceLocation, Message: message1(e.ErrorKind)}
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			err.Missing = k.Missing
		case *kind.AdditionalProperties:
			err.Message += v.unknownHint(e, root, k.Properties)
		}
		*out = append(*out, err)
		return
	}
	for _, c := range e.Causes {
		v.collect(c, root, out)
	}
}

// message1 words one leaf error for a model.
func message1(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Required:
		if len(k.Missing) == 1 {
			return fmt.Sprintf("missing required property %q", k.Missing[0])
		}
		return "missing required properties " + quoteAll(k.Missing)
	case *kind.AdditionalProperties:
		if len(k.Properties) == 1 {
			return fmt.Sprintf("unknown property %q is not allowed", k.Properties[0])
		}
		return "unknown properties " + quoteAll(k.Properties) + " are not allowed"
	case *kind.FalseSchema:
		return "no value is allowed here"
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "value must be " + jsonText(k.Want[0])
		}
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return "value must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		return "value must be " + jsonText(k.Want)
	// Numbers are written plainly: the locale printer would group digits
	// ("40,000"), which reads like two values in JSON.
	case *kind.Minimum:
		return "minimum: got " + plainNumber(k.Got) + ", want at least " + plainNumber(k.Want)
	case *kind.Maximum:
		return "maximum: got " + plainNumber(k.Got) + ", want at most " + plainNumber(k.Want)
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum: got " + plainNumber(k.Got) + ", want more than " + plainNumber(k.Want)
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum: got " + plainNumber(k.Got) + ", want less than " + plainNumber(k.Want)
	case *kind.MultipleOf:
		return "multipleOf: got " + plainNumber(k.Got) + ", want a multiple of " + plainNumber(k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("minLength: got %d characters, want at least %d", k.Got, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("maxLength: got %d characters, want at most %d", k.Got, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("minItems: got %d items, want at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("maxItems: got %d items, want at most %d", k.Got, k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("minProperties: got %d properties, want at least %d", k.Got, k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("maxProperties: got %d properties, want at most %d", k.Got, k.Want)
	}
	return k.LocalizedString(printer)
}

// plainNumber writes a number without grouping: 40000, 0.25.
func plainNumber(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsonText renders a schema value as JSON.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// instancePath renders a location inside args as "a.b[0].c", walking args to
// tell array indexes from object keys.
func instancePath(loc []string, root any) string {
	if len(loc) == 0 {
		return ""
	}
	var b strings.Builder
	cur := root
	for _, tok := range loc {
		switch v := cur.(type) {
		case []any:
			b.WriteByte('[')
			b.WriteString(tok)
			b.WriteByte(']')
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(v) {
				cur = v[i]
			} else {
				cur = nil
			}
		default:
			if m, ok := v.(map[string]any); ok {
				cur = m[tok]
			} else {
				cur = nil
			}
			writeChild(&b, tok)
		}
	}
	return b.String()
}

// writeChild appends one key to the dotted path in b, as child does.
func writeChild(b *strings.Builder, key string) {
	switch {
	case !isIdent(key):
		b.WriteByte('[')
		b.WriteString(strconv.Quote(key))
		b.WriteByte(']')
	case b.Len() > 0:
		b.WriteByte('.')
		b.WriteString(key)
	default:
		b.WriteString(key)
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return false
		}
	}
	return true
}
