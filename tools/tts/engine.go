package tts

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// An engine speaks text into audio.
type engine interface {
	name() string
	// formats are the formats it makes, its default first.
	formats() []string
	// speeds is the range of speeds it takes.
	speeds() (lo, hi float64)
	// limit is the most bytes of text one request takes.
	limit() int
	// defaults are the voice and model when neither a call nor the
	// settings name one.
	defaults() (voice, model string)
	// speak makes the audio of text, which fits the limit.
	speak(ctx context.Context, text string, o options) ([]byte, error)
}

// options are one call's choices, defaults applied.
type options struct {
	voice, format, model string
	speed                float64
}

// Endpoint is where an engine's API is and the environment variable that
// holds its key.
type Endpoint struct {
	BaseURL string
	KeyEnv  string
}

// OpenAIService carries the endpoint of providers.openai (its URL and key
// variable) to the tts tool; without it the tool uses OpenAI's own.
var OpenAIService = tool.NewService[Endpoint]()

// The engines' default endpoints.
var (
	openAIDefault     = Endpoint{BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"}
	elevenLabsDefault = Endpoint{BaseURL: "https://api.elevenlabs.io", KeyEnv: "ELEVENLABS_API_KEY"}
)

// newEngine returns the engine name with its endpoint: openai's from
// providers.openai (ep, when set), the settings' baseURL over either.
func newEngine(name string, openai Endpoint, c Config) engine {
	switch name {
	case "openai":
		ep := openAIDefault
		if openai.BaseURL != "" {
			ep.BaseURL = openai.BaseURL
		}
		ep.KeyEnv = cmp.Or(openai.KeyEnv, ep.KeyEnv)
		ep.BaseURL = cmp.Or(c.BaseURL, ep.BaseURL)
		return openAIEngine{ep}
	case "elevenlabs":
		ep := elevenLabsDefault
		ep.BaseURL = cmp.Or(c.BaseURL, ep.BaseURL)
		return elevenLabsEngine{ep}
	}
	return espeak{}
}

// espeakBin is espeak-ng's command.
const espeakBin = "espeak-ng"

// espeak is Debian's espeak-ng, run once per chunk.
type espeak struct{}

func (espeak) name() string                    { return "espeak" }
func (espeak) formats() []string               { return []string{"wav"} }
func (espeak) speeds() (lo, hi float64)        { return 0.5, 2.5 }
func (espeak) limit() int                      { return 4000 }
func (espeak) defaults() (voice, model string) { return "en", "" }

// espeakWPM is espeak-ng's normal rate in words per minute (speed 1).
const espeakWPM = 175

func (espeak) speak(ctx context.Context, text string, o options) ([]byte, error) {
	cmd := exec.CommandContext(ctx, espeakBin, "-b", "1", "-v", o.voice, "-s", strconv.Itoa(int(espeakWPM*o.speed+0.5)), "--stdout")
	cmd.Stdin = strings.NewReader(text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("espeak-ng: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" && len(out) <= 44 {
		return nil, tool.InputErrorf("espeak-ng made no sound: %s (voices: espeak-ng --voices)", msg)
	}
	return out, nil
}

// openAIEngine is OpenAI's speech API (POST /audio/speech), or a server
// that copies it.
type openAIEngine struct{ ep Endpoint }

func (openAIEngine) name() string                    { return "openai" }
func (openAIEngine) formats() []string               { return []string{"mp3", "wav", "opus"} }
func (openAIEngine) speeds() (lo, hi float64)        { return 0.25, 4 }
func (openAIEngine) limit() int                      { return 4096 }
func (openAIEngine) defaults() (voice, model string) { return "alloy", "gpt-4o-mini-tts" }

func (e openAIEngine) speak(ctx context.Context, text string, o options) ([]byte, error) {
	body := map[string]any{"model": o.model, "input": text, "voice": o.voice, "response_format": o.format, "speed": o.speed}
	h := http.Header{}
	if key := os.Getenv(e.ep.KeyEnv); key != "" {
		h.Set("Authorization", "Bearer "+key)
	} else if e.ep.BaseURL == openAIDefault.BaseURL {
		return nil, tool.InputErrorf("the openai engine needs a key in %s", e.ep.KeyEnv)
	}
	return post(ctx, strings.TrimSuffix(e.ep.BaseURL, "/")+"/audio/speech", h, body)
}

// elevenLabsEngine is ElevenLabs' text-to-speech API.
type elevenLabsEngine struct{ ep Endpoint }

func (elevenLabsEngine) name() string             { return "elevenlabs" }
func (elevenLabsEngine) formats() []string        { return []string{"mp3", "wav"} }
func (elevenLabsEngine) speeds() (lo, hi float64) { return 0.7, 1.2 }
func (elevenLabsEngine) limit() int               { return 5000 }
func (elevenLabsEngine) defaults() (voice, model string) {
	return "21m00Tcm4TlvDq8ikWAM", "eleven_multilingual_v2"
}

// elevenLabsRate is the sample rate of the PCM ElevenLabs sends for wav.
const elevenLabsRate = 22050

// speak asks for MP3, or for raw PCM that it wraps in a WAV file.
func (e elevenLabsEngine) speak(ctx context.Context, text string, o options) ([]byte, error) {
	key := os.Getenv(e.ep.KeyEnv)
	if key == "" {
		return nil, tool.InputErrorf("the elevenlabs engine needs a key in %s", e.ep.KeyEnv)
	}
	out := "mp3_44100_128"
	if o.format == "wav" {
		out = "pcm_" + strconv.Itoa(elevenLabsRate)
	}
	u := strings.TrimSuffix(e.ep.BaseURL, "/") + "/v1/text-to-speech/" + url.PathEscape(o.voice) + "?output_format=" + out
	body := map[string]any{"text": text, "model_id": o.model, "voice_settings": map[string]any{"speed": o.speed}}
	b, err := post(ctx, u, http.Header{"Xi-Api-Key": {key}}, body)
	if err != nil || o.format != "wav" {
		return b, err
	}
	return pcmWAV(b, elevenLabsRate), nil
}

// maxAudioBytes bounds the audio one request may return.
const maxAudioBytes = 64 << 20

// post sends body as JSON to u and returns the answer's body; a status
// other than 200 is an error that quotes the start of the answer.
func post(ctx context.Context, u string, h http.Header, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAudioBytes+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s: %s", req.URL.Host, resp.Status, strings.TrimSpace(string(out[:min(len(out), 500)])))
	}
	if len(out) > maxAudioBytes {
		return nil, fmt.Errorf("%s answered more than %d bytes of audio", req.URL.Host, maxAudioBytes)
	}
	return out, nil
}
