package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// checkSettings checks each tool's settings under tools: against the type
// its tools declare (tool.Meta.Settings): every key known, every value of
// the right type, then the type's own checks (tool.SettingsChecker).
func (c *Config) checkSettings(reg *registry.Registry, metas []tool.Meta) []error {
	types := map[string]any{}
	for _, m := range metas {
		if m.Settings != nil {
			types[cmp.Or(m.SettingsKey, m.ID)] = m.Settings
		}
	}
	var errs []error
	for _, kv := range c.Tools.nodes {
		key := keyOf(kv)
		settings, ok := types[key]
		if !ok {
			errs = append(errs, errorAt(c.Path, kv.Key, noSettings(reg, metas, key)))
			continue
		}
		if s, ok := settings.(*jsonschema.Schema); ok {
			errs = append(errs, c.checkSchema(kv, key, s)...)
			continue
		}
		k := &checker{file: c.Path, tag: "json"}
		if k.check(kv.Value, reflect.TypeOf(settings), "tools."+key); len(k.errs) > 0 {
			errs = append(errs, k.errs...)
			continue
		}
		errs = append(errs, c.checkValues(kv, key, settings)...)
	}
	return errs
}

// checkValues decodes the settings under tools.<key> into a new value of
// the settings' type and runs its checks, if it has any.
func (c *Config) checkValues(kv *ast.MappingValueNode, key string, settings any) []error {
	v := reflect.New(reflect.TypeOf(settings).Elem()).Interface()
	if err := tool.Config(c.Tools.Settings).Decode(key, v); err != nil {
		return []error{errorAt(c.Path, kv.Key, fmt.Sprintf("tools.%s: %v", key, err))}
	}
	checker, ok := v.(tool.SettingsChecker)
	if !ok {
		return nil
	}
	var errs []error
	for _, err := range flatten(checker.CheckSettings()) {
		var se *tool.SettingError
		if errors.As(err, &se) {
			errs = append(errs, c.settingError(se))
		} else {
			errs = append(errs, errorAt(c.Path, kv.Key, fmt.Sprintf("tools.%s: %v", key, err)))
		}
	}
	return errs
}

// settingError places a setting's problem at the setting (or at the
// nearest key written above it, for a setting left out).
func (c *Config) settingError(se *tool.SettingError) error {
	parts := strings.Split(se.Key, ".")
	for n := len(parts); n > 0; n-- {
		path := "$.tools"
		for _, p := range parts[:n] {
			path += "." + pathKey(p)
		}
		if node := c.node(path); node != nil {
			return errorAt(c.Path, node, "tools."+se.Error())
		}
	}
	return &LineError{Path: c.Path, Msg: "tools." + se.Error()}
}

// noSettings says why tools.<key> holds no tool's settings: its tool or
// section takes none (or takes them under another key), or nothing is
// named key.
func noSettings(reg *registry.Registry, metas []tool.Meta, key string) string {
	if m, ok := reg.Meta(key); ok {
		if m.Settings != nil {
			return fmt.Sprintf("tools.%s: %s takes its settings under tools.%s", key, key, m.SettingsKey)
		}
		return fmt.Sprintf("tools.%s: %s takes no settings", key, key)
	}
	if _, section := catalog.SectionOrder(key); section {
		var keys []string
		for _, m := range metas {
			if k := cmp.Or(m.SettingsKey, m.ID); m.Section == key && m.Settings != nil && !slices.Contains(keys, "tools."+k) {
				keys = append(keys, "tools."+k)
			}
		}
		if len(keys) > 0 {
			return fmt.Sprintf("tools.%s: the %s tools take their settings under %s", key, key, strings.Join(keys, ", "))
		}
		return fmt.Sprintf("tools.%s: the %s tools take no settings", key, key)
	}
	msg := fmt.Sprintf("tools.%s: no tool or section is named %q, and it is not a policy key (%s)", key, key, strings.Join(PolicyKeys, ", "))
	close := reg.Suggest(key, 1)
	if len(close) == 0 {
		close = closest.Names(key, PolicyKeys, 1)
	}
	if len(close) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", close[0])
	}
	return msg
}

// flatten lists the errors err joins (err itself when it joins none).
func flatten(err error) []error {
	if many, ok := err.(interface{ Unwrap() []error }); ok {
		return many.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// checkSchema checks the settings under tools.<key> against s, the JSON
// Schema a tool describes them with (a directory tool's): a key a closed
// object does not declare is unknown, as in a settings struct; every other
// problem is the validator's, at the value it is about.
func (c *Config) checkSchema(kv *ast.MappingValueNode, key string, s *jsonschema.Schema) []error {
	k := &checker{file: c.Path}
	k.declared(kv.Value, s, "tools."+key)
	v, err := schema.Compile(s)
	if err != nil {
		return append(k.errs, errorAt(c.Path, kv.Key, fmt.Sprintf("tools.%s: the schema %s declares for its settings does not compile: %v", key, key, err)))
	}
	var value any
	if err := yaml.NodeToValue(kv.Value, &value); err != nil {
		return append(k.errs, errorAt(c.Path, kv.Key, fmt.Sprintf("tools.%s: %v", key, err)))
	}
	if value == nil {
		value = map[string]any{}
	}
	raw, err := json.Marshal(value)
	if err == nil {
		value, err = schema.Decode(raw)
	}
	if err != nil {
		return append(k.errs, errorAt(c.Path, kv.Key, fmt.Sprintf("tools.%s: %v", key, err)))
	}
	for _, e := range v.Validate(value) {
		node, path := nodeAt(kv.Value, e.Location), "tools."+key
		switch {
		case strings.HasPrefix(e.Path, "["):
			path += e.Path
		case e.Path != "":
			path += "." + e.Path
		}
		switch node.(type) {
		case *ast.MappingNode, *ast.NullNode:
			k.fail(node, fmt.Sprintf("%s: %s", path, e.Message))
		default:
			k.fail(node, fmt.Sprintf("%s is %s: %s", path, given(node), e.Message))
		}
	}
	return k.errs
}

// declared refuses the keys of the mapping node that a closed object
// schema s (additionalProperties: false) does not declare, and takes them
// out of it, in the values of the keys it declares and of list items
// too; key is the node's path.
func (k *checker) declared(node ast.Node, s *jsonschema.Schema, key string) {
	if s == nil {
		return
	}
	switch n := bare(node).(type) {
	case *ast.MappingNode:
		keys := slices.Sorted(maps.Keys(s.Properties))
		n.Values = slices.DeleteFunc(n.Values, func(kv *ast.MappingValueNode) bool {
			name := keyOf(kv)
			if p, ok := s.Properties[name]; ok {
				k.declared(kv.Value, p, join(key, name))
				return false
			}
			if closed(s) {
				k.fail(kv.Key, unknownKey(key, name, keys))
				return true
			}
			return false
		})
	case *ast.SequenceNode:
		for i, item := range n.Values {
			k.declared(item, s.Items, fmt.Sprintf("%s[%d]", key, i))
		}
	}
}

// closed says whether s allows no keys but its properties.
func closed(s *jsonschema.Schema) bool {
	b, _ := json.Marshal(s.AdditionalProperties)
	return string(b) == "false"
}

// nodeAt returns the node at loc (keys and indexes) below node, or the
// nearest one above it that the file has.
func nodeAt(node ast.Node, loc []string) ast.Node {
	for _, tok := range loc {
		var next ast.Node
		switch n := bare(node).(type) {
		case *ast.MappingNode:
			for _, kv := range n.Values {
				if keyOf(kv) == tok {
					next = kv.Value
				}
			}
		case *ast.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Values) {
				next = n.Values[i]
			}
		}
		if next == nil {
			return node
		}
		node = next
	}
	return bare(node)
}
