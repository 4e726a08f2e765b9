package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Invocation is what a typed tool's function receives besides its arguments.
type Invocation struct {
	// Call is the call as the pipeline passed it on (arguments normalized).
	Call Call
	// Context says who and where the call runs for.
	Context *Context
	// Update reports partial results; never nil.
	Update UpdateFunc
}

// TypedFunc is the function of a tool made with [New]: it receives the
// decoded arguments.
type TypedFunc[In any] func(ctx context.Context, in In, inv Invocation) (Result, error)

// New makes a tool whose parameter schema is inferred from the struct In and
// whose function receives the arguments decoded into In. The pipeline
// validates every call against the schema before fn runs, so fn sees only
// arguments that satisfy it.
//
// The schema follows encoding/json: a field's JSON name is its property name;
// fields tagged omitempty or omitzero are optional, all others required. A
// `jsonschema:"…"` tag is the property's description. These tags add
// constraints (for a slice field, the scalar ones apply to its items):
//
//	enum:"a,b,c"            allowed values, comma-separated
//	minimum:"1"  maximum:"10"  exclusiveMinimum:"0"  exclusiveMaximum:"1"  multipleOf:"5"
//	minLength:"1"  maxLength:"64"  pattern:"^[a-z]+$"  format:"uri"
//	minItems:"1"  maxItems:"10"  uniqueItems:"true"
//	default:"2000"          the value used when the argument is absent (JSON, or a bare string)
//
// Pointer and slice fields are not nullable in the schema: a model omits an
// argument rather than sending null.
func New[In any](name, description string, fn TypedFunc[In]) (Tool, error) {
	if fn == nil {
		return Tool{}, fmt.Errorf("tool %q: nil function", name)
	}
	params, dec, err := newDecoder[In](name)
	if err != nil {
		return Tool{}, err
	}
	t := Tool{
		Name:        name,
		Description: description,
		Parameters:  params,
		Execute: func(ctx context.Context, call Call, tc *Context, update UpdateFunc) (Result, error) {
			in, err := dec.decode(call)
			if err != nil {
				return Result{}, err
			}
			return fn(ctx, in, Invocation{Call: call, Context: tc, Update: update})
		},
	}
	if err := t.Check(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// StructuredFunc is the function of a tool made with [NewStructured]: it
// receives the decoded arguments and returns the structured result.
type StructuredFunc[In, Out any] func(ctx context.Context, in In, inv Invocation) (Out, error)

// NewStructured makes a tool as [New] does whose function returns a value
// of the struct type Out rather than a Result: its output schema
// (Tool.Output) is inferred from Out, with the tags New describes, and a
// call's result is the value as indented JSON text (for clients and models
// that read text) with the value itself as Details, its structured content.
func NewStructured[In, Out any](name, description string, fn StructuredFunc[In, Out]) (Tool, error) {
	if fn == nil {
		return Tool{}, fmt.Errorf("tool %q: nil function", name)
	}
	output, err := inferOutput(reflect.TypeFor[Out]())
	if err != nil {
		return Tool{}, fmt.Errorf("tool %q: %w", name, err)
	}
	t, err := New(name, description, func(ctx context.Context, in In, inv Invocation) (Result, error) {
		out, err := fn(ctx, in, inv)
		if err != nil {
			return Result{}, err
		}
		return JSON(out)
	})
	if err != nil {
		return Tool{}, err
	}
	t.Output = output
	if err := t.Check(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// inferOutput returns the output schema of the struct type t.
func inferOutput(t reflect.Type) (*jsonschema.Schema, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the result must be a struct type, not %s", t)
	}
	s, err := jsonschema.ForType(base, nil)
	if err != nil {
		return nil, err
	}
	if err := applyTags(base, s); err != nil {
		return nil, err
	}
	dropNull(s)
	return s, nil
}

// TypedPreview is the Preview of a tool made with New: it receives the
// decoded arguments.
type TypedPreview[In any] func(ctx context.Context, in In, inv Invocation) (Effects, error)

// NewPreview returns a Preview for the tool name made with New[In]: the
// arguments reach fn decoded exactly as they reach the tool's function,
// defaults included.
func NewPreview[In any](name string, fn TypedPreview[In]) (func(context.Context, Call, *Context) (Effects, error), error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil preview", name)
	}
	_, dec, err := newDecoder[In](name)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, call Call, tc *Context) (Effects, error) {
		in, err := dec.decode(call)
		if err != nil {
			return Effects{}, err
		}
		return fn(ctx, in, Invocation{Call: call, Context: tc, Update: func(Result) {}})
	}, nil
}

// UndoWith returns a Tool.Undo that receives the undo data a call kept
// (Result.Undo) decoded into U.
func UndoWith[U any](fn func(ctx context.Context, data U, inv Invocation) (Result, error)) ExecuteFunc {
	return func(ctx context.Context, call Call, tc *Context, update UpdateFunc) (Result, error) {
		var data U
		if err := json.Unmarshal(call.Arguments, &data); err != nil {
			return Result{}, fmt.Errorf("reading the undo data kept with the call: %w", err)
		}
		return fn(ctx, data, Invocation{Call: call, Context: tc, Update: update})
	}
}

// decoder turns a call's arguments into In: the defaults first, then the
// arguments over them.
type decoder[In any] struct {
	name     string
	defaults json.RawMessage
}

func newDecoder[In any](name string) (*jsonschema.Schema, decoder[In], error) {
	params, defaults, err := inferParameters(reflect.TypeFor[In]())
	if err != nil {
		return nil, decoder[In]{}, fmt.Errorf("tool %q: %w", name, err)
	}
	return params, decoder[In]{name: name, defaults: defaults}, nil
}

func (d decoder[In]) decode(call Call) (In, error) {
	var in In
	if d.defaults != nil {
		if err := json.Unmarshal(d.defaults, &in); err != nil {
			return in, fmt.Errorf("applying default arguments: %w", err)
		}
	}
	if len(call.Arguments) > 0 {
		if err := json.Unmarshal(call.Arguments, &in); err != nil {
			return in, &InputError{Message: fmt.Sprintf("The arguments do not fit the parameters of %s: %v. Check the parameter types and retry.", d.name, err)}
		}
	}
	return in, nil
}

// Must returns t, or panics when err is not nil. It suits tools built at
// program start from constant definitions.
func Must(t Tool, err error) Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// inferParameters returns the schema for the struct type t and the JSON object
// of its top-level defaults (nil when there are none).
func inferParameters(t reflect.Type) (*jsonschema.Schema, json.RawMessage, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("parameters must be a struct type, not %s", t)
	}
	s, err := jsonschema.ForType(base, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := applyTags(base, s); err != nil {
		return nil, nil, err
	}
	dropNull(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	defaults := map[string]json.RawMessage{}
	for name, p := range s.Properties {
		if p.Default != nil {
			defaults[name] = p.Default
		}
	}
	if len(defaults) == 0 {
		return s, nil, nil
	}
	b, err := json.Marshal(defaults)
	if err != nil {
		return nil, nil, err
	}
	// The defaults must decode into the struct, or every call would fail.
	if err := json.Unmarshal(b, reflect.New(base).Interface()); err != nil {
		return nil, nil, fmt.Errorf("default values do not fit %s: %w", base, err)
	}
	return s, b, nil
}

// applyTags adds the constraint tags of struct type t's fields to s, and
// recurses into nested structs, slices and maps.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
	default:
		return nil
	}
	for f := range visibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name := jsonName(f)
		p := s.Properties[name]
		if name == "" || p == nil {
			continue
		}
		if err := applyFieldTags(f, p); err != nil {
			return fmt.Errorf("field %s.%s: %w", t.Name(), f.Name, err)
		}
		if err := applyTags(f.Type, p); err != nil {
			return err
		}
	}
	return nil
}

// visibleFields yields reflect.VisibleFields(t) in its order, without its
// cost (a map and a walk) when t embeds no struct: then they are its fields.
func visibleFields(t reflect.Type) iter.Seq[reflect.StructField] {
	for f := range t.Fields() {
		if f.Anonymous {
			return slices.Values(reflect.VisibleFields(t))
		}
	}
	return t.Fields()
}

// jsonName returns the JSON property name of a struct field, or "" when
// encoding/json skips it.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// applyFieldTags applies one field's constraint tags to its schema p.
func applyFieldTags(f reflect.StructField, p *jsonschema.Schema) error {
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	// Scalar constraints of a slice field describe its items.
	scalar, scalarType := p, ft
	if k := ft.Kind(); (k == reflect.Slice || k == reflect.Array) && p.Items != nil {
		scalar, scalarType = p.Items, ft.Elem()
		for scalarType.Kind() == reflect.Pointer {
			scalarType = scalarType.Elem()
		}
	}
	// One pass over the tag: looking each constraint up would scan the
	// whole tag, descriptions included, a dozen times per field.
	var seenKeys [8]string
	seen := seenKeys[:0] // a key's first value counts, as with Lookup
	for key, v := range tagItems(f.Tag) {
		if slices.Contains(seen, key) {
			continue
		}
		seen = append(seen, key)
		var err error
		switch key {
		case "minimum":
			err = number(key, v, &scalar.Minimum)
		case "maximum":
			err = number(key, v, &scalar.Maximum)
		case "exclusiveMinimum":
			err = number(key, v, &scalar.ExclusiveMinimum)
		case "exclusiveMaximum":
			err = number(key, v, &scalar.ExclusiveMaximum)
		case "multipleOf":
			err = number(key, v, &scalar.MultipleOf)
		case "minLength":
			err = count(key, v, &scalar.MinLength)
		case "maxLength":
			err = count(key, v, &scalar.MaxLength)
		case "minItems":
			err = count(key, v, &p.MinItems)
		case "maxItems":
			err = count(key, v, &p.MaxItems)
		case "pattern":
			scalar.Pattern = v
		case "format":
			scalar.Format = v
		case "uniqueItems":
			b, perr := strconv.ParseBool(v)
			if perr != nil {
				return fmt.Errorf("tag uniqueItems:%q is not a boolean", v)
			}
			p.UniqueItems = b
		case "enum":
			for item := range strings.SplitSeq(v, ",") {
				val, perr := literal(strings.TrimSpace(item), scalarType)
				if perr != nil {
					return fmt.Errorf("tag enum: %w", perr)
				}
				scalar.Enum = append(scalar.Enum, val)
			}
		case "default":
			raw, perr := defaultJSON(v, ft)
			if perr != nil {
				return fmt.Errorf("tag default:%q: %w", v, perr)
			}
			p.Default = raw
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// number sets *dst to the number v of the tag key.
func number(key, v string, dst **float64) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("tag %s:%q is not a number", key, v)
	}
	*dst = &x
	return nil
}

// count sets *dst to the non-negative integer v of the tag key.
func count(key, v string, dst **int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("tag %s:%q is not a non-negative integer", key, v)
	}
	*dst = &n
	return nil
}

// tagItems yields the key:"value" pairs of a struct tag in order, parsed as
// reflect.StructTag.Lookup parses them; it stops at the first malformed
// pair, and skips a value that does not unquote.
func tagItems(tag reflect.StructTag) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for tag != "" {
			i := 0
			for i < len(tag) && tag[i] == ' ' {
				i++
			}
			tag = tag[i:]
			if tag == "" {
				return
			}
			i = 0
			for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' && tag[i] != 0x7f {
				i++
			}
			if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
				return
			}
			key := string(tag[:i])
			tag = tag[i+1:]
			i = 1
			for i < len(tag) && tag[i] != '"' {
				if tag[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(tag) {
				return
			}
			quoted := string(tag[:i+1])
			tag = tag[i+1:]
			value, err := strconv.Unquote(quoted)
			if err != nil {
				continue // Lookup finds no value for this key either
			}
			if !yield(key, value) {
				return
			}
		}
	}
}

// literal parses s as a value of Go type t for an enum.
func literal(s string, t reflect.Type) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Bool:
		return strconv.ParseBool(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(s, 64)
	}
	return nil, fmt.Errorf("enum is not supported on %s", t)
}

// defaultJSON returns the JSON of a default tag: the tag itself when it is
// JSON, or the tag as a JSON string for string fields.
func defaultJSON(v string, t reflect.Type) (json.RawMessage, error) {
	if t.Kind() == reflect.String && !strings.HasPrefix(v, `"`) {
		return json.Marshal(v)
	}
	if !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("not valid JSON")
	}
	return json.RawMessage(v), nil
}

// dropNull removes the "null" that inference adds to pointer and slice types.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		s.Types = slices.DeleteFunc(s.Types, func(t string) bool { return t == "null" })
		if len(s.Types) == 1 {
			s.Type, s.Types = s.Types[0], nil
		}
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
	for _, p := range s.Properties {
		dropNull(p)
	}
}
