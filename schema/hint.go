package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/internal/jsonschema"
)

// maxListed is how many allowed properties an unknown-property error lists
// when none of them looks like what was meant.
const maxListed = 20

// unknownHint words what the schema offers instead of the unknown properties
// e reports: the declared property each one most likely misspells, or else
// the declared properties, when there are few enough to list. Properties
// the object already has are not offered.
func (v *Validator) unknownHint(e *jsonschema.ValidationError, root any, unknown []string) string {
	_, frag, _ := strings.Cut(e.SchemaURL, "#")
	toks, err := pointer("#" + frag)
	if err != nil {
		return ""
	}
	node, _ := lookup(v.doc, toks)
	schema, _ := node.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	obj, _ := lookup(root, e.InstanceLocation)
	have, _ := obj.(map[string]any)
	var free []string
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if _, taken := have[name]; !taken {
			free = append(free, name)
		}
	}
	if len(free) == 0 {
		return ""
	}
	var meant []string
	for _, u := range unknown {
		if c := closest.Names(u, free, 1); len(c) > 0 {
			if len(unknown) == 1 {
				return fmt.Sprintf("; did you mean %q?", c[0])
			}
			meant = append(meant, fmt.Sprintf("%q for %q", c[0], u))
		}
	}
	if len(meant) > 0 {
		return "; did you mean " + strings.Join(meant, ", ") + "?"
	}
	if len(free) <= maxListed {
		return "; the properties left to set are " + quoteAll(free)
	}
	return ""
}
