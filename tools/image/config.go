package image

import (
	"fmt"
	"strings"
)

// ConfigKey is the key of the image tool's settings (tools.image in
// toolbelt.yaml).
const ConfigKey = "image"

// Config is the image tool's settings:
//
//	image:
//	  model: google/gemini-2.5-flash            # analyzes images
//	  generateModel: openai/gpt-image-1          # generates them
type Config struct {
	// Model is the vision model that analyzes images, PROVIDER/MODEL (a
	// built-in provider or one of providers:); empty: the agent's model,
	// when it takes images.
	Model string `json:"model,omitempty"`
	// GenerateModel is the model that generates images, PROVIDER/MODEL:
	// an OpenAI-style provider (the Images API, /images/generations) or
	// Google (a Gemini image model); empty: the tool does not generate.
	GenerateModel string `json:"generateModel,omitempty"`
}

// CheckSettings checks that the models are written PROVIDER/MODEL.
func (c Config) CheckSettings() error {
	for _, kv := range [][2]string{{"model", c.Model}, {"generateModel", c.GenerateModel}} {
		key, spec := kv[0], kv[1]
		if spec == "" {
			continue
		}
		if p, m, ok := strings.Cut(spec, "/"); !ok || p == "" || m == "" {
			return fmt.Errorf("tools.image.%s: %q is not PROVIDER/MODEL, e.g. openai/gpt-4o", key, spec)
		}
	}
	return nil
}
