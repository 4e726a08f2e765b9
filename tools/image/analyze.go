package image

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// maxFileBytes is the largest workspace file analyze reads.
const maxFileBytes = 20 << 20

// defaultPrompt is what analyze asks without a prompt.
const defaultPrompt = "Describe the image."

// analysisClient returns the client that analyzes images: the model of
// spec (tools.image.model), else the agent's model when it takes images.
// Without one, the error says why, in words for the configuration's author.
func analysisClient(models Models, spec, agentID string) (llm.Client, error) {
	setting := "tools.image.model"
	if spec == "" {
		spec, setting = models.AgentModel(agentID), "the agent's model"
		if spec == "" {
			return nil, errors.New("set tools.image.model to a model that takes images (PROVIDER/MODEL)")
		}
	}
	c, err := models.Client(spec)
	if err != nil {
		return nil, fmt.Errorf("%s %s cannot be used (%v)", setting, spec, err)
	}
	if c.Provider().Quirks.NoImages {
		return nil, fmt.Errorf("%s %s takes no images: set tools.image.model to one that does", setting, spec)
	}
	return c, nil
}

// analyze asks the analysis model about the images of in.
func (t *imageTool) analyze(ctx context.Context, in args, tc *tool.Context) (tool.Result, error) {
	if t.analysis == nil {
		return tool.Result{}, tool.InputErrorf("image analysis is not available here: %v. This tool can only generate images (action generate).", t.analysisErr)
	}
	refs := in.Images
	if in.Image != "" {
		refs = append([]string{in.Image}, refs...)
	}
	if len(refs) == 0 {
		return tool.Result{}, tool.InputErrorf("give the image to analyze: image (a workspace path, an http(s) URL or a data: URL) or images (a list of them).")
	}
	prompt := in.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = defaultPrompt
	}
	msg := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: prompt}}}
	var seen []map[string]any
	for _, ref := range refs {
		fit, err := t.load(ctx, ref, tc)
		if err != nil {
			return tool.Result{}, err
		}
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockImage, Data: fit.Data, MIMEType: fit.MIMEType})
		seen = append(seen, map[string]any{"image": label(ref), "mimeType": fit.MIMEType, "width": fit.Width, "height": fit.Height, "resized": fit.Resized})
	}
	answer, err := t.analysis.Stream(ctx, llm.Request{Messages: []llm.Message{msg}}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{}, tool.InputErrorf("the image model %s failed: %v. Try again later.", spec(t.analysis), err)
	}
	res := tool.Text(answer.Text())
	details := map[string]any{"model": spec(t.analysis), "images": seen}
	if answer.Usage != nil {
		details["usage"] = answer.Usage
	}
	res.Details = details
	return res, nil
}

// spec names a client's model as PROVIDER/MODEL.
func spec(c llm.Client) string { return c.Provider().Name + "/" + c.Model() }

// label is how an image reference is named in details: a data URL by its
// type and size, not its bytes.
func label(ref string) string {
	if strings.HasPrefix(ref, "data:") {
		return fmt.Sprintf("data URL (%d characters)", len(ref))
	}
	return ref
}

// load reads the image ref names and fits it within the pipeline's limits.
func (t *imageTool) load(ctx context.Context, ref string, tc *tool.Context) (content.FittedImage, error) {
	data, declared, err := t.read(ctx, strings.TrimSpace(ref), tc)
	if err != nil {
		return content.FittedImage{}, err
	}
	fit := content.FitImage(data, declared, content.ImageLimits{})
	if fit.Note != "" {
		return content.FittedImage{}, tool.InputErrorf("%s cannot be analyzed: %s", label(ref), strings.Trim(fit.Note, "[]"))
	}
	return fit, nil
}

// read returns the base64 bytes of the image ref names and its declared
// media type: a data: URL as it is, an http(s) URL fetched under
// web_fetch's rules, anything else a workspace file.
func (t *imageTool) read(ctx context.Context, ref string, tc *tool.Context) (string, string, error) {
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "data:"):
		head, data, ok := strings.Cut(ref[len("data:"):], ",")
		if !ok || !strings.HasSuffix(strings.ToLower(head), ";base64") {
			return "", "", tool.InputErrorf("a data: URL must be data:<type>;base64,<data>.")
		}
		return data, head[:len(head)-len(";base64")], nil
	case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
		g, err := web.NewGetter(tc, t.opts.Web)
		if err != nil {
			return "", "", err
		}
		body, ct, err := g.Get(ctx, ref, "image/png,image/jpeg,image/gif,image/webp,image/*;q=0.8")
		if err != nil {
			return "", "", err
		}
		media, _, _ := mime.ParseMediaType(ct)
		return base64.StdEncoding.EncodeToString(body), media, nil
	}
	if tc == nil || tc.FS == nil {
		return "", "", tool.InputErrorf("%s: there is no workspace here to read it from; give an http(s) or data: URL.", ref)
	}
	st, err := tc.FS.Stat(ctx, ref)
	if err != nil {
		return "", "", tool.InputErrorf("%s cannot be read: %v. Give a workspace path (see ls), an http(s) URL or a data: URL.", ref, err)
	}
	if st.Size() > maxFileBytes {
		return "", "", tool.InputErrorf("%s is %d bytes, more than the %d an image may have here.", ref, st.Size(), maxFileBytes)
	}
	b, err := tc.FS.ReadFile(ctx, ref)
	if err != nil {
		return "", "", tool.InputErrorf("%s cannot be read: %v.", ref, err)
	}
	return base64.StdEncoding.EncodeToString(b), "", nil
}
