package openapi

import (
	"fmt"
	"maps"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// bodyKey is the property of the request body in a tool's parameters.
const bodyKey = "body"

// reservedHeaders are the header parameters OpenAPI says are ignored: the
// request's media types and its credentials are not the model's to set.
var reservedHeaders = []string{"Accept", "Content-Type", "Authorization"}

// input is where one property of a tool's parameters goes in the request.
type input struct {
	name string // the parameter's name in the request
	in   string // path, query, header, cookie, or "body"
	// explode sends an array query parameter as one key per element
	// (the default of style form); without it, comma-separated.
	explode bool
}

// parameters builds a tool's parameter schema from an operation: one
// property per parameter (its schema kept whole, with its description) and
// "body" for a JSON or text request body. References into the document
// become references into the schema's $defs, which hold what they point
// at, so the schema compiler sees one self-contained schema.
func (d *Document) parameters(op Operation) (map[string]any, map[string]input, string, error) {
	props, inputs := map[string]any{}, map[string]input{}
	var required []any
	defs := map[string]any{}
	for _, p := range op.Params {
		name, _ := p["name"].(string)
		in, _ := p["in"].(string)
		if name == "" || in == "" {
			return nil, nil, "", fmt.Errorf("a parameter has no name or no in")
		}
		if in == "header" && slices.Contains(reservedHeaders, http.CanonicalHeaderKey(name)) {
			continue
		}
		key := name
		if _, taken := inputs[key]; taken || key == bodyKey {
			key = in + "_" + name
		}
		s, _ := p["schema"].(map[string]any)
		if s == nil {
			s = map[string]any{"type": "string"}
		}
		s = d.schema(s, defs)
		if desc, ok := p["description"].(string); ok && s["description"] == nil {
			s["description"] = desc
		}
		props[key] = s
		explode, set := p["explode"].(bool)
		style, _ := p["style"].(string)
		inputs[key] = input{name: name, in: in, explode: explode || !set && (style == "" || style == "form")}
		if r, _ := p["required"].(bool); r || in == "path" {
			required = append(required, key)
		}
	}
	var media string
	if op.Body != nil {
		var s map[string]any
		media, s = bodyContent(op.Body)
		if media == "" {
			return nil, nil, "", fmt.Errorf("the request body has no JSON or text media type")
		}
		s = d.schema(s, defs)
		if desc, ok := op.Body["description"].(string); ok && s["description"] == nil {
			s["description"] = desc
		}
		props[bodyKey] = s
		inputs[bodyKey] = input{name: bodyKey, in: bodyKey}
		if r, _ := op.Body["required"].(bool); r {
			required = append(required, bodyKey)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return out, inputs, media, nil
}

// bodyContent picks the request body's media type — JSON first, then
// text — and its schema (a string for text without one).
func bodyContent(body map[string]any) (string, map[string]any) {
	content, _ := body["content"].(map[string]any)
	var text string
	for _, m := range slices.Sorted(maps.Keys(content)) {
		base, _, err := mime.ParseMediaType(m)
		if err != nil {
			continue
		}
		if base == "application/json" || strings.HasSuffix(base, "+json") {
			media, _ := content[m].(map[string]any)
			s, _ := media["schema"].(map[string]any)
			if s == nil {
				s = map[string]any{}
			}
			return m, s
		}
		if strings.HasPrefix(base, "text/") && text == "" {
			text = m
		}
	}
	if text == "" {
		return "", nil
	}
	return text, map[string]any{"type": "string"}
}

// schema copies a schema of the document, rewriting each reference into
// the document as one into defs (filled with what it points at, copied
// the same way) and OpenAPI 3.0's nullable into a type list.
func (d *Document) schema(s map[string]any, defs map[string]any) map[string]any {
	out, _ := d.copy(s, defs).(map[string]any)
	return out
}

// copy is schema for any JSON value.
func (d *Document) copy(v any, defs map[string]any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = d.copy(e, defs)
		}
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			out["$ref"] = d.define(ref, defs)
		}
		if d.v30 && x["nullable"] == true {
			if t, ok := x["type"].(string); ok {
				out["type"] = []any{t, "null"}
				delete(out, "nullable")
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.copy(e, defs)
		}
		return out
	}
	return v
}

// defName is what is not allowed in a $defs key we make.
var defName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// define puts the schema ref points at into defs (once) and returns the
// reference to it there. A reference that points at nothing is kept as it
// is: the schema compiler removes it and says so.
func (d *Document) define(ref string, defs map[string]any) string {
	name := strings.TrimPrefix(ref, "#/components/schemas/")
	if name == ref {
		name = strings.ReplaceAll(strings.TrimPrefix(ref, "#/"), "/", ".")
	}
	name = defName.ReplaceAllString(name, "_")
	local := "#/$defs/" + name
	if _, done := defs[name]; done {
		return local
	}
	target, ok := d.lookup(ref)
	if !ok {
		return ref
	}
	defs[name] = map[string]any{} // a placeholder while copying, for cycles
	defs[name] = d.copy(target, defs)
	return local
}
