package config

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// CheckSettings returns, at their settings' line, why the tools with
// settings in the configuration are unavailable in tc: settings a tool
// cannot use make it unavailable.
func (c *Config) CheckSettings(reg *registry.Registry, tc *tool.Context) []error {
	var errs []error
	reg.ResolveAll(tc, func(id string, err error) {
		var notHere *tool.NotHere
		if errors.As(err, &notHere) {
			return // the context, not the settings
		}
		if _, has := c.Tools.Settings[id]; has {
			errs = append(errs, &LineError{Path: c.Path, Line: c.SettingLine(id), Msg: fmt.Sprintf("tools.%s: %v", id, err)})
		}
	})
	return errs
}

// Plain turns the ordered maps of an effective configuration (Effective)
// into maps, for JSON.
func Plain(v any) any {
	switch v := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(v))
		for _, item := range v {
			m[fmt.Sprint(item.Key)] = Plain(item.Value)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Plain(x)
		}
		return out
	}
	return v
}
