package config

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/registry"
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
