package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm"
)

// checkModels reports the providers entries and the default model that
// name no provider, for config check.
func checkModels(cfg *config.Config) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		if _, err := toolbelt.ConfiguredProvider(name, cfg.Providers[name]); err != nil {
			errs = append(errs, cfg.ErrorAt("$.providers.'"+name+"'", err.Error()))
		}
	}
	if prov, _, ok := strings.Cut(cfg.Model, "/"); ok {
		if _, custom := cfg.Providers[prov]; !custom {
			if _, builtin := llm.LookupProvider(prov); !builtin {
				errs = append(errs, cfg.ErrorAt("$.model", fmt.Sprintf("model %q names the provider %q, which is neither built in (%s) nor under providers", cfg.Model, prov, strings.Join(llm.ProviderNames(), ", "))))
			}
		}
	}
	return errs
}
