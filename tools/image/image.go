// Package image holds the image tool of the media section: it analyzes
// images (workspace files, URLs fetched under web_fetch's rules, data URLs)
// with a prompt through a vision-capable model of the agent loop's
// providers, and generates images through OpenAI's Images API (or a
// compatible server) or a Gemini image model, saving them into the
// workspace. Without a configured model it is listed as unavailable.
package image

import (
	"context"
	"net/http"
	"os"

	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// Models makes the model clients the tool uses.
type Models interface {
	// Client returns a client for spec, PROVIDER/MODEL, with the provider
	// as the configuration defines it (toolbelt.yaml's providers).
	Client(spec string) (llm.Client, error)
	// AgentModel returns the model (PROVIDER/MODEL) the agent agentID runs
	// on ("" for the default agent), or "" when there is none.
	AgentModel(agentID string) string
}

// ModelsService is the key of the Models a tool context carries; without
// one, specs name built-in providers only (llm.New) and no agent's model
// is known.
var ModelsService = tool.NewService[Models]()

// builtin makes clients of the built-in providers.
type builtin struct{}

func (builtin) Client(spec string) (llm.Client, error) { return llm.New(spec, llm.Options{}) }
func (builtin) AgentModel(string) string               { return "" }

// Options change how the tool reaches the network; the zero value uses the
// process environment and web_fetch's defaults. Tests set them.
type Options struct {
	// Web is how URLs of images to analyze are fetched (web_fetch's rules).
	Web web.Options
	// HTTP is the client of generation requests (default: one that ends
	// with the call's context).
	HTTP *http.Client
	// Getenv reads the generation provider's API key (default os.Getenv).
	Getenv func(string) string
}

// Register adds the image tool to reg. It is listed as unavailable, with
// the reason, when neither tools.image.model, tools.image.generateModel
// nor an agent's model that takes images is there to use.
func Register(reg *registry.Registry, opts Options) error {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	return reg.RegisterFactory(func(tc *tool.Context) (*tool.Tool, error) {
		t, err := newTool(tc, opts)
		if err != nil {
			return nil, err
		}
		tl, err := tool.New("image", description, t.run)
		return &tl, err
	}, tool.Meta{
		ID: "image", Label: "Image", Description: description, Section: "media",
		OpenWorld: true, ExternalContent: true, Source: tool.SourceCore, Settings: &Config{},
	})
}

const description = "Analyze images or generate them. Analyze (the default): give image (a workspace path, an http(s) URL or a data: URL) or images (a list) and a prompt saying what to look for; a vision model answers. " +
	"Generate (action generate): give a prompt, and optionally size (e.g. 1024x1024), n and path; the images are saved in the workspace and returned, each with a MEDIA:<path> line."

// args are the image tool's arguments.
type args struct {
	Action string   `json:"action,omitempty" enum:"analyze,generate" default:"analyze" jsonschema:"analyze: describe or answer questions about image(s). generate: create new images from the prompt."`
	Prompt string   `json:"prompt,omitempty" jsonschema:"analyze: what to look for or ask about the images (default: describe them). generate: the image to create." maxLength:"32000"`
	Image  string   `json:"image,omitempty" jsonschema:"analyze: one image, as a workspace path, an http(s) URL or a data: URL." maxLength:"10000000"`
	Images []string `json:"images,omitempty" jsonschema:"analyze: several images, each as image takes them." maxItems:"10"`
	Size   string   `json:"size,omitempty" jsonschema:"generate: the image size, WIDTHxHEIGHT (e.g. 1024x1024, 1536x1024); Gemini models take its aspect ratio." pattern:"^[0-9]+x[0-9]+$"`
	N      int      `json:"n,omitempty" jsonschema:"generate: how many images (default 1)." minimum:"1" maximum:"4"`
	Path   string   `json:"path,omitempty" jsonschema:"generate: the workspace file to save to (default images/generated-ID.png); with n above 1, -1, -2, … are added before the extension." maxLength:"4096"`
}

// imageTool is the tool for one context.
type imageTool struct {
	opts   Options
	s      Config
	models Models
	// analysis is the client that analyzes images; nil when none is
	// configured and the agent's model takes no images.
	analysis llm.Client
	// analysisErr says why there is no analysis client.
	analysisErr error
}

// newTool resolves the models of tc's configuration; a *tool.NotHere says
// there are none.
func newTool(tc *tool.Context, opts Options) (*imageTool, error) {
	var cfg tool.Config
	if tc != nil {
		cfg = tc.Config
	}
	var s Config
	if err := cfg.Decode(ConfigKey, &s); err != nil {
		return nil, err
	}
	if err := s.CheckSettings(); err != nil {
		return nil, err
	}
	models, ok := ModelsService.Get(tc)
	if !ok {
		models = builtin{}
	}
	t := &imageTool{opts: opts, s: s, models: models}
	var agentID string
	if tc != nil {
		agentID = tc.AgentID
	}
	t.analysis, t.analysisErr = analysisClient(models, s.Model, agentID)
	if t.analysis == nil && s.GenerateModel == "" {
		return nil, &tool.NotHere{Reason: "no image model: " + t.analysisErr.Error() + "; to generate images set tools.image.generateModel"}
	}
	return t, nil
}

func (t *imageTool) run(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
	if in.Action == "generate" {
		return t.generate(ctx, in, inv.Context)
	}
	return t.analyze(ctx, in, inv.Context)
}
