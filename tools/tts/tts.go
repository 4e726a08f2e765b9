// Package tts is the tts tool: it speaks text into an audio file in the
// workspace, through Debian's espeak-ng by default, or OpenAI's speech API
// or ElevenLabs by configuration (tools.tts).
package tts

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"os/exec"
	"path"
	"strings"
	"unicode"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// args are the tts tool's arguments.
type args struct {
	Text   string  `json:"text" minLength:"1" maxLength:"100000" jsonschema:"The text to speak. Long text is spoken sentence by sentence into one file."`
	Voice  string  `json:"voice,omitempty" jsonschema:"The voice: an espeak-ng voice (en, en-us, de, fr, …), an OpenAI voice (alloy, nova, …) or an ElevenLabs voice id, as the configured engine takes them (default: tools.tts.voice, else the engine's)."`
	Format string  `json:"format,omitempty" enum:"wav,mp3,opus" jsonschema:"The audio format: wav, mp3 or opus (in Ogg), as the engine makes them (espeak: wav)."`
	Speed  float64 `json:"speed,omitempty" minimum:"0.25" maximum:"4" jsonschema:"The speaking rate, 1 being normal (default: tools.tts.speed, else 1)."`
	Path   string  `json:"path,omitempty" jsonschema:"The file to write, relative to the workspace (default: tts/ and the call's id)."`
}

const description = "Speak text into an audio file in the workspace (wav, mp3 or opus as the configured engine makes them) and return it: the text MEDIA:<path>, the audio where the caller takes it, and its measured duration."

// Register adds the tts tool to reg. With the espeak engine and no
// espeak-ng on the machine, the tool is listed as unavailable, the reason
// saying how to install it.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(factory, tool.Meta{
		ID: "tts", Label: "Text to Speech", Description: description, Section: "media",
		Source: tool.SourceCore, Settings: &Config{},
	})
}

func factory(tc *tool.Context) (*tool.Tool, error) {
	cfg, err := loadConfig(tc.Config)
	if err != nil {
		return nil, err
	}
	if cfg.engine() == "espeak" {
		if _, err := exec.LookPath(espeakBin); err != nil {
			return nil, &tool.NotHere{Reason: "espeak-ng is not installed: apt-get install espeak-ng (or set tools.tts.engine to openai or elevenlabs)"}
		}
	}
	openai, _ := OpenAIService.Get(tc)
	e := newEngine(cfg.engine(), openai, cfg)
	t, err := tool.New("tts", description, func(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
		return speak(ctx, e, cfg, in, inv)
	})
	if err != nil {
		return nil, err
	}
	t.Preview, err = tool.NewPreview("tts", func(ctx context.Context, in args, inv tool.Invocation) (tool.Effects, error) {
		o, rel, err := plan(ctx, e, cfg, in, inv)
		if err != nil {
			return tool.Effects{}, err
		}
		return tool.Effects{Summary: fmt.Sprintf("speak %d characters with %s into %s (%s)", len(in.Text), e.name(), rel, o.format), Files: []string{rel}}, nil
	})
	return &t, err
}

// plan works out a call's options, defaults applied and checked, and the
// workspace file it writes.
func plan(ctx context.Context, e engine, cfg Config, in args, inv tool.Invocation) (options, string, error) {
	voice, model := e.defaults()
	o := options{
		voice:  cmp.Or(in.Voice, cfg.Voice, voice),
		model:  cmp.Or(cfg.Model, model),
		format: cmp.Or(in.Format, cfg.Format, e.formats()[0]),
		speed:  cmp.Or(in.Speed, cfg.Speed, 1),
	}
	if err := checkFormat(e, o.format); err != nil {
		return o, "", err
	}
	if err := checkSpeed(e, o.speed); err != nil {
		return o, "", err
	}
	tc := inv.Context
	if tc == nil || tc.FS == nil {
		return o, "", tool.InputErrorf("tts writes its audio into the workspace, and this call has none")
	}
	p := cmp.Or(in.Path, defaultPath(formats[o.format], inv.Call.ID))
	rel, err := tc.FS.Resolve(ctx, p)
	if err != nil {
		return o, "", tool.InputErrorf("path %s: %v (the audio goes into the workspace)", p, err)
	}
	return o, rel, nil
}

// speak runs one call: the text spoken in chunks, joined, written to the
// workspace and measured.
func speak(ctx context.Context, e engine, cfg Config, in args, inv tool.Invocation) (tool.Result, error) {
	o, rel, err := plan(ctx, e, cfg, in, inv)
	if err != nil {
		return tool.Result{}, err
	}
	f := formats[o.format]
	audio, err := render(ctx, e, f, in.Text, o)
	if err != nil {
		return tool.Result{}, err
	}
	d, err := f.duration(audio)
	if err != nil {
		return tool.Result{}, fmt.Errorf("%s sent %s audio that cannot be read: %w", e.name(), o.format, err)
	}
	fs := inv.Context.FS
	if err := fs.MkdirAll(ctx, path.Dir(rel)); err != nil {
		return tool.Result{}, tool.InputErrorf("path %s: %v", rel, err)
	}
	if err := fs.WriteFile(ctx, rel, audio, 0o644); err != nil {
		return tool.Result{}, tool.InputErrorf("writing %s: %v", rel, err)
	}
	return tool.Result{
		Content: []tool.Content{
			{Type: tool.TextContent, Text: "MEDIA:" + rel},
			{Type: tool.AudioContent, Data: base64.StdEncoding.EncodeToString(audio), MIMEType: f.mime},
		},
		Details: map[string]any{"path": rel, "format": o.format, "durationMs": d.Milliseconds(), "bytes": len(audio)},
	}, nil
}

// render speaks text in chunks the engine takes, cut at sentence ends,
// and joins their audio into one file.
func render(ctx context.Context, e engine, f format, text string, o options) ([]byte, error) {
	chunks := split(text, e.limit())
	if len(chunks) == 0 {
		return nil, tool.InputErrorf("text has nothing to speak")
	}
	parts := make([][]byte, len(chunks))
	for i, c := range chunks {
		b, err := e.speak(ctx, c, o)
		if err != nil {
			return nil, err
		}
		parts[i] = b
	}
	b, err := f.join(parts)
	if err != nil {
		return nil, fmt.Errorf("%s sent %s audio that cannot be joined: %w", e.name(), o.format, err)
	}
	return b, nil
}

// defaultPath is the file of the call callID under tts/, the same for its
// preview and its run: the id's letters, digits, _ and - (others
// replaced by _).
func defaultPath(f format, callID string) string {
	name := strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, callID)
	return "tts/" + cmp.Or(name, "speech") + f.ext
}
