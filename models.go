package toolbelt

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tools/image"
)

// ModelClient returns the client for spec (PROVIDER/MODEL), with the
// provider as cfg's providers entry adjusts or defines it; baseURL, when
// set, is the endpoint instead of the provider's.
func ModelClient(cfg *config.Config, spec, baseURL string) (llm.Client, error) {
	opts := llm.Options{BaseURL: baseURL}
	name, model, ok := strings.Cut(strings.TrimSpace(spec), "/")
	entry, has := cfg.Providers[name]
	if !ok || !has {
		return llm.New(spec, opts)
	}
	p, err := ConfiguredProvider(name, entry)
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

// ConfiguredProvider is the built-in provider a providers entry names
// (itself or its base) with the entry's settings.
func ConfiguredProvider(name string, entry config.ModelProvider) (llm.Provider, error) {
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

// ImageModels is the image tool's view of cfg's models: clients as
// ModelClient makes them, and each agent's model — agents.<id>.model, else
// TOOLBELT_MODEL, else model — except that the agent runAgent runs on
// runModel when that is set (toolbelt run --model).
func ImageModels(cfg *config.Config, runAgent, runModel string) image.Models {
	return imageModels{cfg: cfg, runAgent: runAgent, runModel: runModel}
}

type imageModels struct {
	cfg                *config.Config
	runAgent, runModel string
}

func (m imageModels) Client(spec string) (llm.Client, error) { return ModelClient(m.cfg, spec, "") }

func (m imageModels) AgentModel(id string) string {
	if m.runModel != "" && id == m.runAgent {
		return m.runModel
	}
	return cmp.Or(m.cfg.Agents[id].Model, os.Getenv("TOOLBELT_MODEL"), m.cfg.Model)
}

// ContextWindow is the context window in tokens of model (PROVIDER/MODEL):
// its provider entry's contextWindow when set, else the window package llm
// knows of the model; 0 when neither says.
func ContextWindow(cfg *config.Config, model string) int {
	name, _, _ := strings.Cut(strings.TrimSpace(model), "/")
	return cmp.Or(cfg.Providers[name].ContextWindow, llm.ContextWindow(model))
}
