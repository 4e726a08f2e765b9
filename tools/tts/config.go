package tts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// ConfigKey is the key of the tts tool's settings (tools.tts in
// toolbelt.yaml).
const ConfigKey = "tts"

// Config is the tts tool's settings:
//
//	tts:
//	  engine: openai      # espeak (the default), openai or elevenlabs
//	  voice: nova         # the voice when a call names none
//	  format: mp3         # the format when a call names none
//	  speed: 1.1          # the speed when a call gives none
//	  model: tts-1        # the engine's model (openai, elevenlabs)
type Config struct {
	// Engine speaks the text: espeak (Debian's espeak-ng, on this
	// machine), openai (OpenAI's speech API, or a compatible server: the
	// key and URL of providers.openai) or elevenlabs (its key from
	// ELEVENLABS_API_KEY).
	Engine string `json:"engine,omitempty" default:"espeak"`
	// Voice is the voice when a call names none: an espeak-ng voice (en,
	// en-us, de, …), an OpenAI voice (alloy, nova, …) or an ElevenLabs
	// voice id (default: en, alloy, 21m00Tcm4TlvDq8ikWAM).
	Voice string `json:"voice,omitempty"`
	// Format is the audio format when a call names none: wav, mp3 or opus
	// (in Ogg), as the engine has them (default: the engine's first).
	Format string `json:"format,omitempty"`
	// Speed is the speaking rate when a call gives none, 1 being the
	// engine's normal rate.
	Speed float64 `json:"speed,omitempty" default:"1"`
	// Model is the engine's model (default gpt-4o-mini-tts for openai,
	// eleven_multilingual_v2 for elevenlabs; espeak has none).
	Model string `json:"model,omitempty"`
	// BaseURL is the engine's URL instead of its own (for openai,
	// instead of providers.openai's; for elevenlabs,
	// https://api.elevenlabs.io), for a compatible server or a test.
	BaseURL string `json:"baseURL,omitempty"`
}

// engines are the engines' names.
var engines = []string{"espeak", "openai", "elevenlabs"}

// CheckSettings checks the engine's name and that it makes the format and
// takes the speed.
func (c Config) CheckSettings() error {
	name := c.engine()
	if !slices.Contains(engines, name) {
		return &tool.SettingError{Key: ConfigKey + ".engine", Msg: fmt.Sprintf("is %q: want one of %s", c.Engine, strings.Join(engines, ", "))}
	}
	e := newEngine(name, Endpoint{}, c)
	if c.Format != "" {
		if err := checkFormat(e, c.Format); err != nil {
			return &tool.SettingError{Key: ConfigKey + ".format", Msg: fmt.Sprintf("is %q: %v", c.Format, err)}
		}
	}
	if c.Speed != 0 {
		if err := checkSpeed(e, c.Speed); err != nil {
			return &tool.SettingError{Key: ConfigKey + ".speed", Msg: fmt.Sprintf("is %g: %v", c.Speed, err)}
		}
	}
	return nil
}

// engine is the engine's name, espeak when none is set.
func (c Config) engine() string {
	if c.Engine == "" {
		return "espeak"
	}
	return c.Engine
}

// loadConfig reads and checks the settings under ConfigKey.
func loadConfig(c tool.Config) (Config, error) {
	var cfg Config
	if err := c.Decode(ConfigKey, &cfg); err != nil {
		return Config{}, err
	}
	return cfg, cfg.CheckSettings()
}

// checkFormat refuses a format the engine cannot make, naming those it can.
func checkFormat(e engine, name string) error {
	if !slices.Contains(e.formats(), name) {
		return tool.InputErrorf("%s cannot make %s audio: it makes %s", e.name(), name, strings.Join(e.formats(), ", "))
	}
	return nil
}

// checkSpeed refuses a speed outside the engine's range.
func checkSpeed(e engine, speed float64) error {
	lo, hi := e.speeds()
	if speed < lo || speed > hi {
		return tool.InputErrorf("%s speaks at speeds from %g to %g (1 is its normal rate), not %g", e.name(), lo, hi, speed)
	}
	return nil
}
