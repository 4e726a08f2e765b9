// Package openapi imports the operations of OpenAPI 3.x documents as tools
// (tools.openapi in toolbelt.yaml): one tool per operation, its parameters
// and request body as the tool's parameters, kept whole as MCP imports keep
// theirs, and each call an HTTP request to the API.
package openapi

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/toolbelt/toolbelt/schema"
)

// Section is the catalog section of the imported tools; one API's tools are
// also in the group "openapi:<name>".
const Section = "openapi"

// methods are the HTTP methods an OpenAPI path item may have operations for.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Document is a parsed OpenAPI document in the generic JSON form (objects
// as map[string]any, numbers as json.Number).
type Document struct {
	root map[string]any
	// v30 is set for OpenAPI 3.0, whose schemas say nullable their own way.
	v30 bool
}

// Parse reads an OpenAPI 3.x document, JSON or YAML.
func Parse(data []byte) (*Document, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("the document is neither JSON nor YAML: %w", err)
	}
	v, err := schema.Decode(js)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not an object")
	}
	version, _ := root["openapi"].(string)
	if !strings.HasPrefix(version, "3.") {
		if _, ok := root["swagger"]; ok {
			return nil, fmt.Errorf("the document is Swagger 2.0: convert it to OpenAPI 3 first")
		}
		return nil, fmt.Errorf("the document is not OpenAPI 3.x (openapi is %q)", version)
	}
	return &Document{root: root, v30: strings.HasPrefix(version, "3.0")}, nil
}

// Server returns the URL of the document's first server ("" if none).
// A relative one is resolved against base, the document's own URL.
func (d *Document) Server(base string) string {
	servers, _ := d.root["servers"].([]any)
	if len(servers) == 0 {
		return ""
	}
	s, _ := servers[0].(map[string]any)
	u, _ := s["url"].(string)
	if vars, ok := s["variables"].(map[string]any); ok {
		for name, v := range vars {
			variable, _ := v.(map[string]any)
			if def, ok := variable["default"].(string); ok {
				u = strings.ReplaceAll(u, "{"+name+"}", def)
			}
		}
	}
	if b, err := url.Parse(base); err == nil && base != "" {
		if r, err := b.Parse(u); err == nil {
			return r.String()
		}
	}
	return u
}

// Operation is one operation of the document.
type Operation struct {
	// ID is the operationId, or method_path when the document gives none.
	ID          string
	Method      string // upper case
	Path        string
	Summary     string
	Description string
	Tags        []string
	Deprecated  bool
	// Params are the path item's and the operation's parameters, resolved.
	Params []map[string]any
	// Body is the request body, resolved (nil: none).
	Body map[string]any
}

// Operations returns the document's operations in path and method order.
func (d *Document) Operations() ([]Operation, error) {
	paths, _ := d.root["paths"].(map[string]any)
	var ops []Operation
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, err := d.deref(paths[p])
		if err != nil {
			return nil, fmt.Errorf("paths.%s: %w", p, err)
		}
		shared, err := d.params(item["parameters"])
		if err != nil {
			return nil, fmt.Errorf("paths.%s: %w", p, err)
		}
		for _, m := range methods {
			raw, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			op, err := d.operation(p, m, raw, shared)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(m), p, err)
			}
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// operation reads one operation; its parameters override the path item's
// shared ones of the same name and location.
func (d *Document) operation(path, method string, raw map[string]any, shared []map[string]any) (Operation, error) {
	op := Operation{Method: strings.ToUpper(method), Path: path}
	op.ID, _ = raw["operationId"].(string)
	if op.ID == "" {
		op.ID = method + "_" + strings.Trim(path, "/")
	}
	op.Summary, _ = raw["summary"].(string)
	op.Description, _ = raw["description"].(string)
	op.Deprecated, _ = raw["deprecated"].(bool)
	for _, t := range asList(raw["tags"]) {
		if s, ok := t.(string); ok {
			op.Tags = append(op.Tags, s)
		}
	}
	own, err := d.params(raw["parameters"])
	if err != nil {
		return op, err
	}
	for _, p := range shared {
		if !slices.ContainsFunc(own, func(o map[string]any) bool { return o["name"] == p["name"] && o["in"] == p["in"] }) {
			op.Params = append(op.Params, p)
		}
	}
	op.Params = append(op.Params, own...)
	if raw["requestBody"] != nil {
		if op.Body, err = d.deref(raw["requestBody"]); err != nil {
			return op, fmt.Errorf("requestBody: %w", err)
		}
	}
	return op, nil
}

// params resolves a list of parameters.
func (d *Document) params(v any) ([]map[string]any, error) {
	var out []map[string]any
	for i, p := range asList(v) {
		m, err := d.deref(p)
		if err != nil {
			return nil, fmt.Errorf("parameters[%d]: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// deref follows $ref (inside the document only, repeatedly) to an object.
func (d *Document) deref(v any) (map[string]any, error) {
	for range 32 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		if v, ok = d.lookup(ref); !ok {
			return nil, fmt.Errorf("$ref %s points at nothing in the document (only references inside it are followed)", ref)
		}
	}
	return nil, fmt.Errorf("$ref chain too long")
}

// lookup returns the value a local reference ("#/components/…") names.
func (d *Document) lookup(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = d.root
	for _, tok := range strings.Split(frag, "/") {
		tok, _ = url.PathUnescape(tok)
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func asList(v any) []any { l, _ := v.([]any); return l }
