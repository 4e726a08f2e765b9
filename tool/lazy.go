package tool

import (
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// LazyParameters is a parameter schema given in its generic JSON form (as
// a JSON decoder gives it) and converted to a [jsonschema.Schema] only
// when something asks for it ([Tool.Params]): a tool list compiles the
// generic form as it is, and the conversion waits for a tool's first call
// or its schema check. A server importing a thousand tools converted all
// of their schemas before it could list them, a sixth of its start.
type LazyParameters struct {
	doc     any
	convert func(any) (*jsonschema.Schema, error)

	once sync.Once
	s    *jsonschema.Schema
}

// NewLazyParameters returns parameters whose schema is convert(doc), made
// on first use. doc must not change, and convert must not fail on it (a
// failure makes a schema that refuses every call, not none at all). Tool
// lists compile doc itself, so it must be the generic form of the
// converted schema (schema.FromSchema of it), as the forms
// schema.RoundTripForm gives are for schema.ToSchema.
func NewLazyParameters(doc any, convert func(any) (*jsonschema.Schema, error)) *LazyParameters {
	return &LazyParameters{doc: doc, convert: convert}
}

// Doc returns the generic form the parameters were given in; it is
// read-only.
func (l *LazyParameters) Doc() any { return l.doc }

// Schema returns the parameters' schema, converting it the first time.
func (l *LazyParameters) Schema() *jsonschema.Schema {
	l.once.Do(func() {
		s, err := l.convert(l.doc)
		if err != nil || s == nil {
			s = &jsonschema.Schema{Not: &jsonschema.Schema{}} // fail closed
		}
		l.s = s
	})
	return l.s
}

// Params returns the tool's parameter schema: Parameters, or, when that
// is nil, the schema LazyParameters makes (converted on the first call
// for them). Nil means the tool takes no arguments. Code that reads a
// tool's schema reads it here, not from Parameters.
func (t *Tool) Params() *jsonschema.Schema {
	if t.Parameters == nil && t.LazyParameters != nil {
		return t.LazyParameters.Schema()
	}
	return t.Parameters
}

// objectDoc reports whether a schema's generic form describes an object
// (or does not say), as Check requires of Parameters, and names its type
// when it does not.
func objectDoc(doc any) (string, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return "", true // true or false: no type
	}
	switch t := m["type"].(type) {
	case string:
		if t == "" || t == "object" {
			return "", true
		}
		return `"` + t + `"`, false
	case []any:
		if len(t) == 0 || len(t) == 1 && t[0] == "object" {
			return "", true
		}
		names := ""
		for i, e := range t {
			if i > 0 {
				names += "|"
			}
			s, _ := e.(string)
			names += s
		}
		return `"` + names + `"`, false
	}
	return "", true
}

// ParamsDoc returns the generic form of the tool's schema when it has
// lazy parameters (and no Parameters): what a tool list compiles without
// converting it.
func (t *Tool) ParamsDoc() (any, bool) {
	if t.Parameters == nil && t.LazyParameters != nil {
		return t.LazyParameters.Doc(), true
	}
	return nil, false
}

// ParamsKey identifies the tool's schema for caches of its compiled forms,
// without converting lazy parameters: Parameters, or LazyParameters, or
// nil when the tool has neither.
func (t *Tool) ParamsKey() any {
	switch {
	case t.Parameters != nil:
		return t.Parameters
	case t.LazyParameters != nil:
		return t.LazyParameters
	}
	return nil
}
