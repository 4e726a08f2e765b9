package mcp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is a prompt served to clients, read from a Markdown file of the
// prompts folder (Options.PromptsDir): YAML front matter between "---"
// lines, then the text, in which {{name}} stands for the argument name.
//
//	---
//	description: Review a file for bugs.
//	arguments:
//	  - name: path
//	    description: The file to review.
//	    required: true
//	  - name: focus
//	    values: [security, performance, style]
//	---
//	Review {{path}}, looking at {{focus}} first.
//
// The front matter's embed lists resources of the server (workspace:///…,
// mcp.resources, with {{name}} filled in too) whose contents come before
// the text: images and audio as such, the others as embedded resources.
type Prompt struct {
	// Name is the front matter's name, else the file's name without .md.
	Name        string           `yaml:"name"`
	Title       string           `yaml:"title"`
	Description string           `yaml:"description"`
	Arguments   []PromptArgument `yaml:"arguments"`
	// Embed are the URIs of the resources the prompt embeds, read as the
	// client would read them (the same policy) when the prompt is got.
	Embed []string `yaml:"embed"`
	// Text is what follows the front matter.
	Text string `yaml:"-"`
}

// PromptArgument is an argument a prompt declares.
type PromptArgument struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	// Values, when given, are the values completion/complete suggests.
	Values []string `yaml:"values"`
	// Path says the argument is a workspace path: completion/complete
	// suggests the workspace's files.
	Path bool `yaml:"path"`
}

// LoadPrompts reads the prompts of the Markdown files (*.md) of dir, in
// the order of their names. A missing dir holds none; a file that cannot
// be read as a prompt is an error naming it.
func LoadPrompts(dir string) ([]Prompt, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	var out []Prompt
	seen := map[string]string{}
	for _, f := range files {
		p, err := loadPrompt(f)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[p.Name]; dup {
			return nil, fmt.Errorf("%s: the prompt name %q is taken by %s", f, p.Name, other)
		}
		seen[p.Name] = f
		out = append(out, p)
	}
	return out, nil
}

// loadPrompt reads one prompt file.
func loadPrompt(file string) (Prompt, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Prompt{}, err
	}
	p := Prompt{Name: strings.TrimSuffix(filepath.Base(file), ".md")}
	front, text, ok := frontMatter(b)
	if ok {
		if err := yaml.UnmarshalWithOptions(front, &p, yaml.DisallowUnknownField()); err != nil {
			return Prompt{}, fmt.Errorf("%s: the front matter: %w", file, err)
		}
	}
	p.Text = string(text)
	for i, a := range p.Arguments {
		if a.Name == "" {
			return Prompt{}, fmt.Errorf("%s: argument %d has no name", file, i+1)
		}
	}
	return p, nil
}

// frontMatter splits a file into its front matter (between a first line
// "---" and the next such line) and the text after it.
func frontMatter(b []byte) (front, text []byte, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	rest, found := bytes.CutPrefix(b, []byte("---\n"))
	if !found {
		return nil, b, false
	}
	if i := bytes.Index(rest, []byte("\n---\n")); i >= 0 {
		return rest[:i+1], rest[i+5:], true
	}
	if front, found := bytes.CutSuffix(rest, []byte("\n---")); found {
		return front, nil, true
	}
	return nil, b, false
}

// servePrompts adds the prompts.
func (s *Server) servePrompts(prompts []Prompt) {
	for _, p := range prompts {
		sp := &sdk.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			sp.Arguments = append(sp.Arguments, &sdk.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		s.sdk.AddPrompt(sp, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			fill, err := p.filler(req.Params.Arguments)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			var msgs []*sdk.PromptMessage
			for _, e := range p.Embed {
				uri := fill.Replace(e)
				res, err := s.readOwn(ctx, req.Session, req.Extra, uri)
				if err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s embeds %s: %v", p.Name, uri, err)}
				}
				for _, c := range res.Contents {
					msgs = append(msgs, &sdk.PromptMessage{Role: "user", Content: embedded(c)})
				}
			}
			if text := fill.Replace(p.Text); strings.TrimSpace(text) != "" || len(msgs) == 0 {
				msgs = append(msgs, &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: text}})
			}
			return &sdk.GetPromptResult{Description: p.Description, Messages: msgs}, nil
		})
	}
}

// filler returns what puts the arguments' values in place of their
// {{name}} in the prompt's text and embeds; a missing required argument,
// or one the prompt does not declare, is an error.
func (p *Prompt) filler(args map[string]string) (*strings.Replacer, error) {
	for name := range args {
		if !slices.ContainsFunc(p.Arguments, func(a PromptArgument) bool { return a.Name == name }) {
			return nil, fmt.Errorf("prompt %s has no argument %q", p.Name, name)
		}
	}
	pairs := make([]string, 0, 2*len(p.Arguments))
	for _, a := range p.Arguments {
		v, ok := args[a.Name]
		if !ok && a.Required {
			return nil, fmt.Errorf("prompt %s needs the argument %q", p.Name, a.Name)
		}
		pairs = append(pairs, "{{"+a.Name+"}}", v)
	}
	return strings.NewReplacer(pairs...), nil
}

// embedded is a resource's contents as a prompt message's content: an
// image or audio as such, anything else as an embedded resource.
func embedded(c *sdk.ResourceContents) sdk.Content {
	switch {
	case c.Blob != nil && strings.HasPrefix(c.MIMEType, "image/"):
		return &sdk.ImageContent{Data: c.Blob, MIMEType: c.MIMEType}
	case c.Blob != nil && strings.HasPrefix(c.MIMEType, "audio/"):
		return &sdk.AudioContent{Data: c.Blob, MIMEType: c.MIMEType}
	}
	return &sdk.EmbeddedResource{Resource: c}
}

// argument returns the prompt's argument of that name.
func (p *Prompt) argument(name string) (PromptArgument, bool) {
	i := slices.IndexFunc(p.Arguments, func(a PromptArgument) bool { return a.Name == name })
	if i < 0 {
		return PromptArgument{}, false
	}
	return p.Arguments[i], true
}

// complete answers completion/complete: a prompt's argument from its
// declared values or, for a path argument, the workspace's paths; the
// workspace file template's path from the workspace's paths; an imported
// prompt's or template's argument from its server.
func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	if res, ok, err := s.completeImported(ctx, req); ok {
		return res, err
	}
	ref, arg := req.Params.Ref, req.Params.Argument
	caller := callerOf(s.opts.Owner, req.Session, req.Extra)
	switch {
	case ref.Type == "ref/resource" && ref.URI == FilesTemplate && arg.Name == "path":
		return s.completePath(ctx, caller, arg.Value)
	case ref.Type == "ref/prompt":
		i := slices.IndexFunc(s.prompts, func(p Prompt) bool { return p.Name == ref.Name })
		if i < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no prompt %q", ref.Name)}
		}
		a, ok := s.prompts[i].argument(arg.Name)
		switch {
		case !ok:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s has no argument %q", ref.Name, arg.Name)}
		case a.Path:
			return s.completePath(ctx, caller, arg.Value)
		}
		values := []string{}
		for _, v := range a.Values {
			if strings.HasPrefix(v, arg.Value) && len(values) < maxCompletions {
				values = append(values, v)
			}
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values}}, nil
	}
	return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}, nil
}
