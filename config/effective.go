package config

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Effective returns the configuration in effect, in the order of the
// reference: what the file sets, and for every scalar it leaves unset the
// default (the `default` tag of its field). Maps of scopes and servers show
// what is configured; the tools' settings are shown under tools: where they
// live.
func (c *Config) Effective() yaml.MapSlice {
	return effective(reflect.ValueOf(*c))
}

func effective(v reflect.Value) yaml.MapSlice {
	var out yaml.MapSlice
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous { // Tools embeds Rules
			out = append(out, effective(fv)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			if f.Name == "Settings" { // tools: settings of tools
				m, _ := fv.Interface().(map[string]any)
				for _, k := range slices.Sorted(maps.Keys(m)) {
					out = append(out, yaml.MapItem{Key: k, Value: m[k]})
				}
			}
			continue
		}
		out = append(out, yaml.MapItem{Key: name, Value: effectiveValue(fv, f.Tag.Get("default"))})
	}
	return out
}

func effectiveValue(v reflect.Value, def string) any {
	if v.Kind() == reflect.Pointer { // an optional scalar: set, or the default
		if !v.IsNil() {
			return v.Elem().Interface()
		}
		v = reflect.Zero(v.Type().Elem())
	}
	switch v.Kind() {
	case reflect.Struct:
		return effective(v)
	case reflect.Map:
		if v.Len() == 0 {
			return map[string]any{}
		}
		m := yaml.MapSlice{}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			m = append(m, yaml.MapItem{Key: k.String(), Value: effectiveValue(v.MapIndex(k), "")})
		}
		return m
	case reflect.Slice:
		if v.Len() == 0 {
			return []any{}
		}
		list := make([]any, v.Len())
		for i := range list {
			list[i] = effectiveValue(v.Index(i), "")
		}
		return list
	}
	if v.Type() == reflect.TypeFor[Duration]() {
		d := time.Duration(v.Int())
		if d == 0 && def != "" {
			return def
		}
		return shortDuration(d)
	}
	if v.IsZero() && def != "" {
		switch v.Kind() {
		case reflect.Int, reflect.Int64:
			if n, err := strconv.ParseInt(def, 10, 64); err == nil {
				return n
			}
		case reflect.Bool:
			return def == "true"
		}
		return def
	}
	if v.Kind() == reflect.String && v.String() == "" {
		return nil
	}
	return v.Interface()
}

// shortDuration writes d as a person would: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
