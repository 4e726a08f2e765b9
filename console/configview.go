package console

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// ConfigReport is the Configuration page: what toolbelt config check
// finds, and every value in effect with where it came from.
type ConfigReport struct {
	// Path is the configuration file; "" when the defaults are in effect.
	Path string
	// Errors and Warnings are config check's, in file order.
	Errors, Warnings []string
	// Values are the configuration in effect (config show), one per
	// setting, secrets redacted.
	Values []ConfigValue
}

// ConfigValue is one setting in effect.
type ConfigValue struct {
	// Key is its dotted path ("limits.timeout").
	Key string
	// Value is its value as JSON, secrets redacted as the audit log
	// redacts them.
	Value string
	// From is where it came from: the file and line that set it, or
	// "default".
	From string
}

// CheckConfig checks cfg as toolbelt config check does — its tool
// references and tool settings against reg, the settings that leave a
// tool unavailable in tc, and the world it names (environment variables,
// executables) — and lists the values in effect.
func CheckConfig(cfg *config.Config, reg *registry.Registry, tc *tool.Context) ConfigReport {
	rep := ConfigReport{Path: cfg.Path}
	checked := cfg.CheckTools(reg)
	errs := []error{checked}
	if checked == nil {
		errs = append(errs, cfg.CheckSettings(reg, tc)...)
	}
	if joined, ok := config.Join(errs...).(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			rep.Errors = append(rep.Errors, e.Error())
		}
	}
	for _, w := range cfg.Lint(exec.LookPath, os.LookupEnv) {
		rep.Warnings = append(rep.Warnings, w.Error())
	}
	walk(cfg, "$", "", cfg.Effective(), &rep.Values)
	return rep
}

func (c *Console) loadConfig(*http.Request, User) (any, error) {
	if c.opts.Registry == nil {
		return nil, errNoTools
	}
	return CheckConfig(c.opts.Config, c.opts.Registry, c.opts.Context), nil
}

// walk adds the settings under v, at the YAML path path and the dotted key
// key, to out: a map's entries one by one, anything else (a scalar, a
// list, an empty map) as one value.
func walk(cfg *config.Config, path, key string, v any, out *[]ConfigValue) {
	var entries yaml.MapSlice
	switch m := v.(type) {
	case yaml.MapSlice:
		entries = m
	case map[string]any: // a tool's settings
		for _, k := range slices.Sorted(maps.Keys(m)) {
			entries = append(entries, yaml.MapItem{Key: k, Value: m[k]})
		}
	}
	if len(entries) == 0 {
		*out = append(*out, ConfigValue{Key: key, Value: redactedJSON(key, v), From: origin(cfg, path)})
		return
	}
	for _, e := range entries {
		k := fmt.Sprint(e.Key)
		sub := path + "." + k
		if strings.ContainsAny(k, ".'[] ") {
			sub = path + ".'" + k + "'"
		}
		walk(cfg, sub, strings.TrimPrefix(key+"."+k, "."), e.Value, out)
	}
}

// origin says where the value at path came from.
func origin(cfg *config.Config, path string) string {
	if line := cfg.Line(path); line > 0 {
		return fmt.Sprintf("%s:%d", cfg.Path, line)
	}
	return "default"
}

// redactedJSON writes v as JSON, redacted as the audit log redacts the
// arguments of a call that passed it under key's last word.
func redactedJSON(key string, v any) string {
	name := key[strings.LastIndexByte(key, '.')+1:]
	raw, err := json.Marshal(map[string]any{name: config.Plain(v)})
	if err != nil {
		return fmt.Sprint(v)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(audit.Redact(raw), &m); err != nil {
		return string(raw)
	}
	return cmp.Or(string(m[name]), "null")
}
