package schema

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// References are followed only inside the schema, by JSON pointer
// ("#/$defs/node", "#/properties/a/items"). Nothing is ever fetched: a
// remote or unknown reference is removed, the node keeps its description,
// and the report says so.

// resolve returns the schema a local reference points to and a key that
// names it for cycle detection.
func (c *compiler) resolve(ref string) (map[string]any, string, error) {
	tokens, err := pointer(ref)
	if err != nil {
		return nil, "", err
	}
	cur, ok := lookup(c.root, tokens)
	if !ok {
		return nil, "", fmt.Errorf("reference %s removed: it points at nothing in the schema", ref)
	}
	key := pointerKey(tokens)
	switch x := cur.(type) {
	case map[string]any:
		return x, key, nil
	case bool:
		if x {
			return map[string]any{}, key, nil
		}
		return map[string]any{hintKey: []string{"no value is allowed here"}}, key, nil
	}
	return nil, "", fmt.Errorf("reference %s removed: it points at %s, not a schema", ref, valueType(cur))
}

// pointer decodes a local reference into JSON-pointer tokens: URI escapes
// first, then ~1 and ~0.
func pointer(ref string) ([]string, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	switch {
	case ref == "":
		return nil, fmt.Errorf("empty reference removed")
	case !ok:
		return nil, fmt.Errorf("reference %s removed: only references inside the schema are followed, nothing is fetched", ref)
	case frag != "" && frag[0] != '/':
		return nil, fmt.Errorf("reference %s removed: anchors are not followed, only JSON pointers inside the schema", ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("reference %s removed: %v", ref, err)
	}
	if frag == "" {
		return nil, nil
	}
	tokens := strings.Split(frag[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// lookup returns the value at the JSON-pointer tokens inside doc.
func lookup(doc any, tokens []string) (any, bool) {
	for _, tok := range tokens {
		switch x := doc.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			doc = x[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// pointerKey renders tokens as a canonical local reference.
func pointerKey(tokens []string) string {
	var b strings.Builder
	b.WriteByte('#')
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// keptRef returns the reference to write for ref when the dialect keeps it:
// a reference to a root definition that exists.
func (c *compiler) keptRef(ref string) (string, bool) {
	if !c.d.refs() {
		return "", false
	}
	tokens, err := pointer(ref)
	if err != nil || len(tokens) != 2 {
		return "", false
	}
	root, _ := c.root.(map[string]any)
	defs, _ := root[tokens[0]].(map[string]any)
	if _, ok := defs[tokens[1]]; !ok {
		return "", false
	}
	switch {
	case tokens[0] == "$defs":
		return ref, true
	case tokens[0] != "definitions":
		return "", false
	case c.d.Accepts("definitions"):
		return ref, true
	case c.movable[tokens[1]]:
		return pointerKey([]string{"$defs", tokens[1]}), true
	}
	return "", false
}

// movableDefinitions lists the root "definitions" that move to "$defs" for
// a dialect that keeps references under $defs only: those whose name is
// not taken there.
func (c *compiler) movableDefinitions() map[string]bool {
	if !c.d.refs() || c.d.Accepts("definitions") {
		return nil
	}
	root, _ := c.root.(map[string]any)
	defs, _ := root["definitions"].(map[string]any)
	dollar, _ := root["$defs"].(map[string]any)
	out := map[string]bool{}
	for name := range defs {
		if _, taken := dollar[name]; !taken {
			out[name] = true
		}
	}
	return out
}

// moveDefinitions moves the movable root definitions to $defs.
func (c *compiler) moveDefinitions(n *nodeState) {
	defs, ok := n.m["definitions"].(map[string]any)
	if !ok || len(c.movable) == 0 {
		return
	}
	dollar := map[string]any{}
	if d, ok := n.m["$defs"].(map[string]any); ok {
		for k, v := range d {
			dollar[k] = v
		}
	}
	rest := map[string]any{}
	for _, name := range sortedKeys(defs) {
		if c.movable[name] {
			dollar[name] = defs[name]
		} else {
			rest[name] = defs[name]
		}
	}
	n.m["$defs"] = dollar
	if len(rest) == 0 {
		delete(n.m, "definitions")
	} else {
		n.m["definitions"] = rest
	}
	c.change("definitions", "moved to $defs", c.rejects("definitions"))
}

// unusedDefinitions reports the root definitions no reference used, where
// the dialect inlines references and so drops definitions.
func (c *compiler) unusedDefinitions() {
	if c.d.refs() {
		return
	}
	root, _ := c.root.(map[string]any)
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := root[k].(map[string]any)
		for _, name := range sortedKeys(defs) {
			if !c.used[pointerKey([]string{k, name})] {
				c.change(child(child("", k), name), "never referenced; removed with "+k, "")
			}
		}
	}
}

// overlay merges a reference's target into m, the referring node without
// its $ref: m's description, title and default override the target's, and
// its other keywords apply together with the target's.
func overlay(m, target map[string]any) {
	t := make(map[string]any, len(target))
	for k, v := range target {
		switch k {
		case "$defs", "definitions", "$schema", "$id", "$anchor":
			continue // a copy is not a schema resource
		case "description", "title", "default", "examples":
			if _, ok := m[k]; ok {
				continue
			}
		}
		t[k] = v
	}
	intersect(m, t)
}
