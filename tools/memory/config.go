package memory

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolbelt/toolbelt/tool"
)

// ConfigKey is the key of the memory tools' settings in [tool.Config].
const ConfigKey = "memory"

// Config is the memory tools' settings, read from the tool context's
// configuration under [ConfigKey]:
//
//	memory:
//	  embeddings:
//	    provider: openai            # openai (or a compatible server), gemini, ollama
//	    model: text-embedding-3-small
//	    apiKeyEnv: OPENAI_API_KEY
//	    dimensions: 512
type Config struct {
	// Embeddings configures an embedding provider; with one, memory_search
	// is hybrid (keywords and vectors), without one keyword only.
	Embeddings Embeddings `json:"embeddings,omitzero"`
}

// loadConfig reads the memory settings from c, refusing unknown keys.
func loadConfig(c tool.Config) (Config, error) {
	var cfg Config
	raw, ok := c[ConfigKey]
	if !ok {
		return cfg, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return cfg, fmt.Errorf("tools.%s: %w", ConfigKey, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("tools.%s: %w (keys: embeddings.provider, model, baseUrl, apiKeyEnv, dimensions, batchSize, timeout, maxRetries, minSimilarity)", ConfigKey, err)
	}
	return cfg, nil
}

// CheckSettings checks the embedding provider's settings.
func (c Config) CheckSettings() error {
	if c.Embeddings == (Embeddings{}) {
		return nil
	}
	if _, err := NewEmbedder(c.Embeddings); err != nil {
		return &tool.SettingError{Key: ConfigKey + ".embeddings", Msg: "cannot be used: " + err.Error()}
	}
	return nil
}
