package dir

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/schema"
)

// closedSettings returns a copy of the settings schema s in which an
// object that lists its properties, and says nothing of others
// (additionalProperties, patternProperties), takes no others: a key the
// schema does not declare is a typo, refused as a built-in tool's unknown
// setting is. The properties of properties, items and $defs are closed
// the same way; the alternatives of allOf, anyOf and oneOf are left as
// written, since closing each would refuse what another declares.
func closedSettings(s *jsonschema.Schema) *jsonschema.Schema {
	s = s.CloneSchemas()
	var close func(s *jsonschema.Schema)
	close = func(s *jsonschema.Schema) {
		if s == nil {
			return
		}
		if s.Properties != nil && s.AdditionalProperties == nil && s.PatternProperties == nil {
			s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}} // false
		}
		for _, p := range s.Properties {
			close(p)
		}
		close(s.Items)
		for _, d := range s.Defs {
			close(d)
		}
	}
	close(s)
	return s
}

// settingsOf returns the tool's settings as its handler gets them: those
// the configuration gives under tools.<name> (nil for none: {}), checked
// with v, the validator of the schema the metadata declares; or why they
// cannot be used.
func (t *Tool) settingsOf(v *schema.Validator, given any) (json.RawMessage, error) {
	if given == nil {
		given = map[string]any{}
	}
	raw, err := json.Marshal(given)
	if err != nil {
		return nil, fmt.Errorf("tools.%s: %w", t.Meta.ID, err)
	}
	value, err := schema.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("tools.%s: %w", t.Meta.ID, err)
	}
	if errs := v.Validate(value); len(errs) > 0 {
		problems := make([]string, len(errs))
		for i, e := range errs {
			problems[i] = e.String()
		}
		return nil, fmt.Errorf("the settings of %s (tools.%s in toolbelt.yaml) do not match what its metadata.json declares: %s; toolbelt config check shows where", t.Meta.ID, t.Meta.ID, strings.Join(problems, "; "))
	}
	return raw, nil
}
