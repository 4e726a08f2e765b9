package fs

import (
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// PatchConfigKey is the key of apply_patch's settings in [tool.Config]
// (tools.apply_patch in toolbelt.yaml).
const PatchConfigKey = "apply_patch"

// PatchConfig is apply_patch's settings:
//
//	apply_patch:
//	  providers: [openai, openai-responses, anthropic] # the agent loop offers it to these models
type PatchConfig struct {
	// Providers are the model providers ("openai") or models
	// ("openai/gpt-5") whose agent sessions (toolbelt run, chat,
	// configured agents) are offered apply_patch; "*" is every model.
	// Default: the seeds' OpenAI/Codex models, openai and
	// openai-responses. Other models edit with edit and write. MCP
	// clients, which name no model, are always offered it.
	Providers []string `json:"providers,omitempty" default:"[openai, openai-responses]"`
}

// patchProviders are the providers offered apply_patch by default: the
// seeds offer it to OpenAI/Codex models only.
var patchProviders = []string{"openai", "openai-responses"}

// OffersPatch reports whether an agent session of model (PROVIDER/MODEL)
// is offered apply_patch under the settings in c.
func OffersPatch(c tool.Config, model string) (bool, error) {
	var cfg PatchConfig
	if err := c.Decode(PatchConfigKey, &cfg); err != nil {
		return false, err
	}
	if cfg.Providers == nil {
		cfg.Providers = patchProviders
	}
	model = strings.ToLower(strings.TrimSpace(model))
	provider, _, _ := strings.Cut(model, "/")
	return slices.ContainsFunc(cfg.Providers, func(p string) bool {
		p = strings.ToLower(strings.TrimSpace(p))
		return p == "*" || p == provider || p == model
	}), nil
}
