package canvas

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Surface is one A2UI surface as the renderer draws it: its components in
// the v0.9 form whatever version built them (v0.8 components are
// translated), and its data model.
type Surface struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	Catalog string `json:"catalogId,omitempty"`
	// Root is the component drawn first: beginRendering's root (v0.8),
	// "root" (v0.9).
	Root string `json:"root"`
	// Ready: v0.8's beginRendering or v0.9's createSurface came.
	Ready      bool                      `json:"ready"`
	Components map[string]map[string]any `json:"components"`
	Data       any                       `json:"data"`
	// DataRev counts the data model's updates, so that a page keeps what
	// its user typed until the agent changes the data.
	DataRev int            `json:"dataRev"`
	Theme   map[string]any `json:"theme,omitempty"`
}

// surfaces is a canvas's surfaces in the order they were made.
type surfaces struct {
	order []string
	byID  map[string]*Surface
}

// clone copies s so that applying messages to the copy leaves s as it
// was: maps are copied one level down, and data models are replaced, never
// changed in place (see setPointer).
func (s surfaces) clone() surfaces {
	c := surfaces{order: slices.Clone(s.order), byID: make(map[string]*Surface, len(s.byID))}
	for id, sf := range s.byID {
		cp := *sf
		cp.Components = maps.Clone(sf.Components)
		c.byID[id] = &cp
	}
	return c
}

// list returns the surfaces in order.
func (s surfaces) list() []*Surface {
	out := make([]*Surface, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.byID[id])
	}
	return out
}

// apply applies msgs in order; the first that cannot be applied (a
// surface not created, of another version) is returned as a LineError and
// s is then partly changed: apply to a clone.
func (s *surfaces) apply(msgs []message) error {
	for _, m := range msgs {
		if err := s.apply1(m); err != nil {
			return &PushError{[]LineError{{Line: m.line, Field: m.kind + ".surfaceId", Message: err.Error()}}}
		}
	}
	return nil
}

func (s *surfaces) apply1(m message) error {
	id, _ := m.body["surfaceId"].(string)
	sf := s.byID[id]
	if sf != nil && sf.Version != m.version {
		return fmt.Errorf("surface %q was made with A2UI %s; this message is %s: delete it first or use another surfaceId", id, sf.Version, m.version)
	}
	switch m.kind {
	case "createSurface":
		if sf != nil {
			return fmt.Errorf("surface %q exists: send deleteSurface first, or use updateComponents", id)
		}
		sf = s.add(id, m.version)
		sf.Ready, sf.Root = true, "root"
		sf.Catalog, _ = m.body["catalogId"].(string)
		sf.Theme, _ = m.body["theme"].(map[string]any)
	case "beginRendering":
		if sf == nil {
			sf = s.add(id, m.version)
		}
		sf.Ready = true
		sf.Root, _ = m.body["root"].(string)
		sf.Catalog, _ = m.body["catalogId"].(string)
		sf.Theme, _ = m.body["styles"].(map[string]any)
	case "surfaceUpdate", "updateComponents":
		if sf == nil {
			if m.version == V09 {
				return fmt.Errorf("no surface %q: send createSurface first", id)
			}
			sf = s.add(id, m.version)
		}
		for _, raw := range m.body["components"].([]any) {
			c := raw.(map[string]any)
			if m.version == V08 {
				c = fromV08(c)
			}
			sf.Components[c["id"].(string)] = c
		}
	case "dataModelUpdate", "updateDataModel":
		if sf == nil {
			if m.version == V09 {
				return fmt.Errorf("no surface %q: send createSurface first", id)
			}
			sf = s.add(id, m.version)
		}
		path, _ := m.body["path"].(string)
		value, set := m.body["value"]
		if m.version == V08 {
			value, set = entries(m.body["contents"].([]any)), true
		}
		data, err := setPointer(sf.Data, path, value, !set)
		if err != nil {
			return fmt.Errorf("path %q: %w", path, err)
		}
		sf.Data = data
		sf.DataRev++
	case "deleteSurface":
		if sf == nil {
			return fmt.Errorf("no surface %q to delete", id)
		}
		delete(s.byID, id)
		s.order = slices.DeleteFunc(s.order, func(x string) bool { return x == id })
	}
	return nil
}

func (s *surfaces) add(id, version string) *Surface {
	if s.byID == nil {
		s.byID = map[string]*Surface{}
	}
	sf := &Surface{ID: id, Version: version, Components: map[string]map[string]any{}, Data: map[string]any{}}
	s.byID[id] = sf
	s.order = append(s.order, id)
	return sf
}

// entries turns v0.8's data entries ({key, valueString|valueNumber|
// valueBoolean|valueMap}) into an object.
func entries(list []any) map[string]any {
	out := map[string]any{}
	for _, raw := range list {
		e := raw.(map[string]any)
		k := e["key"].(string)
		for name, v := range e {
			switch name {
			case "valueString", "valueNumber", "valueBoolean":
				out[k] = v
			case "valueMap":
				out[k] = entries(v.([]any))
			}
		}
	}
	return out
}

// setPointer returns root with the value at the JSON Pointer path set to
// v (or removed), copying every object and array on the way so that root
// itself is not changed. "" and "/" name the root.
func setPointer(root any, path string, v any, remove bool) (any, error) {
	if path == "" || path == "/" {
		if remove {
			return map[string]any{}, nil
		}
		return v, nil
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("a data model path starts with /")
	}
	var keys []string
	for _, k := range strings.Split(path[1:], "/") {
		keys = append(keys, strings.ReplaceAll(strings.ReplaceAll(k, "~1", "/"), "~0", "~"))
	}
	return setIn(root, keys, v, remove)
}

func setIn(node any, keys []string, v any, remove bool) (any, error) {
	k, rest := keys[0], keys[1:]
	switch n := node.(type) {
	case []any:
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i > len(n) {
			return nil, fmt.Errorf("%q is not an index of a list of %d", k, len(n))
		}
		out := slices.Clone(n)
		if i == len(out) {
			out = append(out, nil)
		}
		if len(rest) == 0 {
			if remove {
				return slices.Delete(out, i, i+1), nil
			}
			out[i] = v
			return out, nil
		}
		child, err := setIn(out[i], rest, v, remove)
		out[i] = child
		return out, err
	default:
		m, _ := node.(map[string]any)
		out := maps.Clone(m)
		if out == nil {
			out = map[string]any{}
		}
		if len(rest) == 0 {
			if remove {
				delete(out, k)
			} else {
				out[k] = v
			}
			return out, nil
		}
		child, err := setIn(out[k], rest, v, remove)
		out[k] = child
		return out, err
	}
}

// fromV08 translates a v0.8 component ({"id", "weight", "component":
// {"Text": {…}}}) into the v0.9 form the renderer draws.
func fromV08(c map[string]any) map[string]any {
	typ, raw := componentOf(c)
	p := raw.(map[string]any)
	out := map[string]any{"id": c["id"], "component": typ}
	if w, ok := c["weight"]; ok {
		out["weight"] = w
	}
	rename := map[string]string{
		"usageHint": "variant", "altText": "description", "distribution": "justify", "alignment": "align",
		"tabItems": "tabs", "entryPointChild": "trigger", "contentChild": "content", "textFieldType": "variant",
		"minValue": "min", "maxValue": "max", "selections": "value",
	}
	if typ == "TextField" {
		rename["text"] = "value"
	}
	for k, v := range p {
		name := k
		if r, ok := rename[k]; ok {
			name = r
		}
		out[name] = dynamic(v)
	}
	switch typ {
	case "Image":
		if out["fit"] == "scale-down" {
			out["fit"] = "scaleDown"
		}
	case "Row", "Column", "List":
		out["children"] = childrenV08(p["children"].(map[string]any))
	case "Tabs":
		var tabs []any
		for _, t := range p["tabItems"].([]any) {
			t := t.(map[string]any)
			tabs = append(tabs, map[string]any{"title": dynamic(t["title"]), "child": t["child"]})
		}
		out["tabs"] = tabs
	case "Button":
		delete(out, "primary")
		if p["primary"] == true {
			out["variant"] = "primary"
		}
		out["action"] = actionV08(p["action"].(map[string]any))
	case "MultipleChoice":
		out["component"] = "ChoicePicker"
		out["variant"] = "mutuallyExclusive"
		if n, ok := p["maxAllowedSelections"]; !ok || fmt.Sprint(n) != "1" {
			out["variant"] = "multipleSelection"
		}
		delete(out, "maxAllowedSelections")
		if d, ok := p["variant"]; ok {
			out["displayStyle"] = d
		}
		var opts []any
		for _, o := range p["options"].([]any) {
			o := o.(map[string]any)
			opts = append(opts, map[string]any{"label": dynamic(o["label"]), "value": o["value"]})
		}
		out["options"] = opts
	}
	return out
}

// dynamic turns v0.8's {"literalString": s} (and literalNumber,
// literalBoolean, literalArray) into the value itself, and keeps
// {"path": p}; other values are returned as they are.
func dynamic(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for k, x := range m {
		switch k {
		case "literalString", "literalNumber", "literalBoolean", "literalArray":
			return x
		}
	}
	return v
}

// childrenV08 turns {"explicitList": […]} into the list and {"template":
// {componentId, dataBinding}} into {componentId, path}.
func childrenV08(ch map[string]any) any {
	if l, ok := ch["explicitList"]; ok {
		return l
	}
	t := ch["template"].(map[string]any)
	return map[string]any{"componentId": t["componentId"], "path": t["dataBinding"]}
}

// actionV08 turns {name, context: [{key, value}]} into {event: {name,
// context: {key: value}}}.
func actionV08(a map[string]any) map[string]any {
	ctx := map[string]any{}
	if list, ok := a["context"].([]any); ok {
		for _, e := range list {
			e := e.(map[string]any)
			ctx[e["key"].(string)] = dynamic(e["value"])
		}
	}
	return map[string]any{"event": map[string]any{"name": a["name"], "context": ctx}}
}
