package canvas

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/schema"
)

// The protocol's schemas, as this package writes them after the A2UI
// specification: per version, the message envelope and each standard
// component's properties.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// The A2UI versions a canvas renders.
const (
	V08 = "v0.8"
	V09 = "v0.9"
)

// catalog is one version's compiled schemas.
type catalog struct {
	message    *schema.Validator
	components map[string]*schema.Validator // by component type
}

var (
	catalogsOnce sync.Once
	catalogs     map[string]*catalog
	catalogsErr  error
)

// catalogFor returns the compiled schemas of version.
func catalogFor(version string) (*catalog, error) {
	catalogsOnce.Do(func() {
		catalogs = map[string]*catalog{}
		for _, v := range []string{V08, V09} {
			c, err := compileCatalog(v)
			if err != nil {
				catalogsErr = fmt.Errorf("canvas: the %s schema: %w", v, err)
				return
			}
			catalogs[v] = c
		}
	})
	return catalogs[version], catalogsErr
}

// schemaFile is the shape of schemas/<version>.json.
type schemaFile struct {
	Message    json.RawMessage            `json:"message"`
	Defs       json.RawMessage            `json:"$defs"`
	Components map[string]componentSchema `json:"components"`
}

type componentSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Input      bool                       `json:"input"` // v0.9: takes checks
}

// compileCatalog compiles version's envelope and one schema per
// component type, each closed (no other properties) and given the common
// properties of its version.
func compileCatalog(version string) (*catalog, error) {
	b, err := schemaFiles.ReadFile("schemas/" + version + ".json")
	if err != nil {
		return nil, err
	}
	var f schemaFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	withDefs := func(doc map[string]any) (*schema.Validator, error) {
		doc["$defs"] = f.Defs
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		return schema.CompileJSON(b)
	}
	var msg map[string]any
	if err := json.Unmarshal(f.Message, &msg); err != nil {
		return nil, err
	}
	c := &catalog{components: map[string]*schema.Validator{}}
	if c.message, err = withDefs(msg); err != nil {
		return nil, err
	}
	for name, cs := range f.Components {
		props := map[string]any{}
		for k, v := range cs.Properties {
			props[k] = v
		}
		if version == V09 {
			props["id"] = map[string]any{"type": "string"}
			props["component"] = map[string]any{"const": name}
			props["accessibility"] = map[string]any{"$ref": "#/$defs/accessibility"}
			props["weight"] = map[string]any{"type": "number"}
			if cs.Input {
				props["checks"] = map[string]any{"$ref": "#/$defs/checks"}
			}
		}
		doc := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if len(cs.Required) > 0 {
			doc["required"] = cs.Required
		}
		if c.components[name], err = withDefs(doc); err != nil {
			return nil, fmt.Errorf("component %s: %w", name, err)
		}
	}
	return c, nil
}

// Components lists the component types version's catalog has.
func Components(version string) []string {
	c, err := catalogFor(version)
	if err != nil || c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.components))
}

// LineError is what is wrong with one line of a push: its number
// (counting from 1), the field (a path such as
// "updateComponents.components[1].action"), and the problem.
type LineError struct {
	Line    int    `json:"line"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Message)
}

// PushError is a push refused: every line's problems, none applied.
type PushError struct{ Lines []LineError }

func (e *PushError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "a2ui_push refused, nothing applied (%d problem", len(e.Lines))
	if len(e.Lines) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, l := range e.Lines {
		b.WriteString("\n  ")
		b.WriteString(l.Error())
	}
	return b.String()
}

// maxErrors is the most problems a refused push lists.
const maxErrors = 20

// message is one validated line: its version, its kind (the one action
// key: surfaceUpdate, createSurface, …) and the action's body.
type message struct {
	line    int
	version string
	kind    string
	body    map[string]any
}

// parse validates every line of jsonl (blank lines skipped) and returns
// the messages, or a *PushError naming each line's problems.
func parse(jsonl string) ([]message, error) {
	var msgs []message
	var problems []LineError
	for i, line := range strings.Split(jsonl, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, errs := parseLine(i+1, line)
		problems = append(problems, errs...)
		if len(errs) == 0 {
			msgs = append(msgs, m)
		}
		if len(problems) >= maxErrors {
			problems = problems[:maxErrors]
			break
		}
	}
	if len(problems) > 0 {
		return nil, &PushError{problems}
	}
	if len(msgs) == 0 {
		return nil, &PushError{[]LineError{{Line: 1, Message: "no message: give one A2UI message (a JSON object) per line"}}}
	}
	return msgs, nil
}

// parseLine validates one line: JSON, the envelope of its version (v0.9
// when it has "version", else v0.8), then each component by its type.
func parseLine(n int, line string) (message, []LineError) {
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return message{}, []LineError{{Line: n, Message: "not JSON: " + err.Error()}}
	}
	if d.More() {
		return message{}, []LineError{{Line: n, Message: "more than one JSON value: give one message per line"}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return message{}, []LineError{{Line: n, Message: "not a JSON object: an A2UI message is an object such as {\"surfaceUpdate\": …}"}}
	}
	version := V08
	if _, ok := obj["version"]; ok {
		version = V09
	}
	c, err := catalogFor(version)
	if err != nil {
		return message{}, []LineError{{Line: n, Message: err.Error()}}
	}
	if errs := c.message.Validate(obj); len(errs) > 0 {
		return message{}, lineErrors(n, "", obj, errs)
	}
	m := message{line: n, version: version}
	for k, b := range obj {
		if k != "version" {
			m.kind, m.body = k, b.(map[string]any)
		}
	}
	if m.kind == "surfaceUpdate" || m.kind == "updateComponents" {
		return m, c.checkComponents(n, m.kind, m.body["components"].([]any))
	}
	return m, nil
}

// checkComponents validates each component of an update against its
// type's schema.
func (c *catalog) checkComponents(n int, kind string, list []any) []LineError {
	var out []LineError
	for i, raw := range list {
		at := fmt.Sprintf("%s.components[%d]", kind, i)
		comp := raw.(map[string]any)
		typ, props := componentOf(comp)
		if kind == "surfaceUpdate" {
			at += ".component." + typ
		}
		v, ok := c.components[typ]
		if !ok {
			field := at + ".component"
			if kind == "surfaceUpdate" {
				field = at
			}
			out = append(out, LineError{Line: n, Field: field, Message: fmt.Sprintf("unknown component %q; the standard catalog has %s", typ, strings.Join(slices.Sorted(maps.Keys(c.components)), ", "))})
			continue
		}
		out = append(out, lineErrors(n, at, props, v.Validate(props))...)
	}
	return out
}

// componentOf returns a component's type and the properties its type's
// schema checks: v0.8's {"id", "component": {"Text": {…}}} or v0.9's
// {"id", "component": "Text", …}.
func componentOf(comp map[string]any) (typ string, props any) {
	if name, ok := comp["component"].(string); ok {
		return name, comp
	}
	for k, v := range comp["component"].(map[string]any) {
		return k, v
	}
	return "", nil
}

// lineErrors words a schema's errors about v for line n, their paths
// under at; a message that does not say what it got is told the value.
func lineErrors(n int, at string, v any, errs []schema.Error) []LineError {
	var out []LineError
	for _, e := range errs {
		msg := e.Message
		if got, ok := valueAt(v, e.Location); ok && !strings.Contains(msg, "got") {
			msg += ", got " + textclip.Clip(compactJSON(got), 80)
		}
		out = append(out, LineError{Line: n, Field: join(at, e.Path), Message: msg})
	}
	return out
}

// valueAt is the value of v at loc, when it is not an object or a list.
func valueAt(v any, loc []string) (any, bool) {
	for _, k := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	switch v.(type) {
	case map[string]any, []any, nil:
		return nil, false
	}
	return v, true
}

// join joins two parts of a field path.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasPrefix(b, "["):
		return a + b
	}
	return a + "." + b
}

// compactJSON renders v as JSON without HTML escaping, for messages.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
