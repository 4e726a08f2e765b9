package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm"
)

// modelClient returns the client for spec (PROVIDER/MODEL), with the
// provider as toolbelt.yaml's providers entry adjusts or defines it.
func modelClient(cfg *config.Config, spec, baseURL string) (llm.Client, error) {
	opts := llm.Options{BaseURL: baseURL}
	name, model, ok := strings.Cut(strings.TrimSpace(spec), "/")
	entry, has := cfg.Providers[name]
	if !ok || !has {
		return llm.New(spec, opts)
	}
	p, err := configuredProvider(name, entry)
	if err != nil {
		return nil, err
	}
	if len(entry.Headers) > 0 {
		opts.Headers = map[string]string{}
		for k, v := range entry.Headers {
			opts.Headers[k] = os.ExpandEnv(v)
		}
	}
	if model == "" {
		return nil, fmt.Errorf("model %q: write it as PROVIDER/MODEL", spec)
	}
	if pr, ok := entry.Prices[model]; ok {
		opts.Price = &llm.Price{Input: pr.Input, Output: pr.Output, CacheRead: pr.CacheRead, CacheWrite: pr.CacheWrite}
	}
	return llm.NewClient(p, model, opts)
}

// configuredProvider is the built-in provider an entry names (itself or
// its base) with the entry's settings.
func configuredProvider(name string, entry config.ModelProvider) (llm.Provider, error) {
	base := cmp.Or(entry.Base, name)
	p, ok := llm.LookupProvider(base)
	if !ok {
		if entry.Base == "" {
			return llm.Provider{}, fmt.Errorf("providers.%s is not a built-in provider: set base to the built-in one it speaks like (%s)", name, strings.Join(llm.ProviderNames(), ", "))
		}
		return llm.Provider{}, fmt.Errorf("providers.%s.base is %q, not a built-in provider: use one of %s", name, entry.Base, strings.Join(llm.ProviderNames(), ", "))
	}
	p.Name = name
	if entry.URL != "" {
		p.BaseURL = entry.URL
		p.KeyRequired = false // a server of one's own may take no key
	}
	if entry.KeyEnv != "" {
		p.KeyEnv = []string{entry.KeyEnv}
	}
	p.Quirks.NoStrict = p.Quirks.NoStrict || entry.NoStrict
	p.Quirks.NoParallelCalls = p.Quirks.NoParallelCalls || entry.NoParallelCalls
	p.Quirks.NoImages = p.Quirks.NoImages || entry.NoImages
	if entry.OAuth && p.API != llm.APIAnthropic {
		return llm.Provider{}, fmt.Errorf("providers.%s.oauth is for Anthropic's API only (Claude subscriptions); %s speaks another one", name, base)
	}
	p.Quirks.OAuth = p.Quirks.OAuth || entry.OAuth
	return p, nil
}

// checkModels reports the providers entries and the default model that
// name no provider, for config check.
func checkModels(cfg *config.Config) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		if _, err := configuredProvider(name, cfg.Providers[name]); err != nil {
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
