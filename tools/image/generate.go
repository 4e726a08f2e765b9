package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// maxAPIResponse bounds a generation response (base64 images included).
const maxAPIResponse = 64 << 20

// picture is one generated image.
type picture struct {
	data []byte
	mime string
	// revised is the prompt the provider says it used, or its words
	// about the image.
	revised string
}

// generator asks one provider for images.
type generator struct {
	http  *http.Client
	base  string
	key   string
	model string
}

// generate creates the images in.Prompt describes and saves them into
// the workspace.
func (t *imageTool) generate(ctx context.Context, in args, tc *tool.Context) (tool.Result, error) {
	if t.s.GenerateModel == "" {
		return tool.Result{}, tool.InputErrorf("image generation is not configured here (tools.image.generateModel is not set); only analysis is available.")
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tool.Result{}, tool.InputErrorf("give the prompt: a description of the image to generate.")
	}
	if tc == nil || tc.FS == nil {
		return tool.Result{}, tool.InputErrorf("there is no workspace here to save generated images in.")
	}
	c, err := t.models.Client(t.s.GenerateModel)
	if err != nil {
		return tool.Result{}, fmt.Errorf("tools.image.generateModel: %w", err)
	}
	p := c.Provider()
	g := generator{http: t.opts.HTTP, base: strings.TrimRight(p.BaseURL, "/"), model: c.Model()}
	for _, k := range p.KeyEnv {
		if g.key == "" {
			g.key = t.opts.Getenv(k)
		}
	}
	n := max(in.N, 1)
	var pics []picture
	switch p.API {
	case llm.APIOpenAIChat, llm.APIOpenAIResponses:
		pics, err = g.openAI(ctx, in.Prompt, in.Size, n, t.fetcher(tc))
	case llm.APIGemini:
		pics, err = g.gemini(ctx, in.Prompt, in.Size, n)
	default:
		return tool.Result{}, tool.InputErrorf("tools.image.generateModel %s: %s has no image generation API here; use an OpenAI-style provider or google.", t.s.GenerateModel, p.Name)
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{}, tool.InputErrorf("generating the image with %s failed: %v", t.s.GenerateModel, err)
	}
	return save(ctx, tc, pics, in.Path, t.s.GenerateModel)
}

// fetcher returns how images the provider answers with by URL are fetched:
// under web_fetch's rules.
func (t *imageTool) fetcher(tc *tool.Context) func(ctx context.Context, u string) ([]byte, string, error) {
	return func(ctx context.Context, u string) ([]byte, string, error) {
		g, err := web.NewGetter(tc, t.opts.Web)
		if err != nil {
			return nil, "", err
		}
		return g.Get(ctx, u, "image/*")
	}
}

// openAI asks the Images API (POST /images/generations) for n images.
func (g generator) openAI(ctx context.Context, prompt, size string, n int, fetch func(context.Context, string) ([]byte, string, error)) ([]picture, error) {
	body := map[string]any{"model": g.model, "prompt": prompt, "n": n}
	if size != "" {
		body["size"] = size
	}
	if !strings.HasPrefix(g.model, "gpt-image") {
		// DALL·E models answer with URLs unless asked; gpt-image models
		// always send base64 and refuse the parameter.
		body["response_format"] = "b64_json"
	}
	header := http.Header{}
	if g.key != "" {
		header.Set("Authorization", "Bearer "+g.key)
	}
	var out struct {
		Data []struct {
			B64JSON       string `json:"b64_json"`
			URL           string `json:"url"`
			RevisedPrompt string `json:"revised_prompt"`
		} `json:"data"`
	}
	if err := g.post(ctx, g.base+"/images/generations", header, body, &out); err != nil {
		return nil, err
	}
	var pics []picture
	for _, d := range out.Data {
		p := picture{revised: d.RevisedPrompt}
		switch {
		case d.B64JSON != "":
			b, err := base64.StdEncoding.DecodeString(d.B64JSON)
			if err != nil {
				return nil, fmt.Errorf("the answer's image is not valid base64: %v", err)
			}
			p.data = b
		case d.URL != "":
			b, ct, err := fetch(ctx, d.URL)
			if err != nil {
				return nil, err
			}
			p.data, p.mime = b, ct
		default:
			continue
		}
		pics = append(pics, p)
	}
	if len(pics) == 0 {
		return nil, fmt.Errorf("the answer held no image")
	}
	return pics, nil
}

// gemini asks a Gemini image model (generateContent with an image
// response) for n images, one request each.
func (g generator) gemini(ctx context.Context, prompt, size string, n int) ([]picture, error) {
	gen := map[string]any{"responseModalities": []string{"TEXT", "IMAGE"}}
	if ratio := aspectRatio(size); ratio != "" {
		gen["imageConfig"] = map[string]string{"aspectRatio": ratio}
	}
	body := map[string]any{
		"contents":         []any{map[string]any{"role": "user", "parts": []any{map[string]string{"text": prompt}}}},
		"generationConfig": gen,
	}
	header := http.Header{}
	if g.key != "" {
		header.Set("x-goog-api-key", g.key)
	}
	var pics []picture
	for range n {
		var out struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text       string `json:"text"`
						InlineData *struct {
							MIMEType string `json:"mimeType"`
							Data     string `json:"data"`
						} `json:"inlineData"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := g.post(ctx, g.base+"/v1beta/models/"+url.PathEscape(g.model)+":generateContent", header, body, &out); err != nil {
			return nil, err
		}
		var text []string
		var got []picture
		for _, c := range out.Candidates {
			for _, p := range c.Content.Parts {
				switch {
				case p.InlineData != nil:
					b, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
					if err != nil {
						return nil, fmt.Errorf("the answer's image is not valid base64: %v", err)
					}
					got = append(got, picture{data: b, mime: p.InlineData.MIMEType})
				case p.Text != "":
					text = append(text, p.Text)
				}
			}
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("the answer held no image (the model wrote %d characters of text instead)", len(strings.Join(text, "")))
		}
		got[0].revised = strings.Join(text, "\n")
		pics = append(pics, got...)
	}
	return pics, nil
}

// aspectRatio is size (WIDTHxHEIGHT) as the ratio Gemini takes, "16:9";
// "" without a size.
func aspectRatio(size string) string {
	w, h, ok := strings.Cut(size, "x")
	a, err1 := strconv.Atoi(w)
	b, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || a <= 0 || b <= 0 {
		return ""
	}
	d := gcd(a, b)
	return fmt.Sprintf("%d:%d", a/d, b/d)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// post sends body as JSON to u and decodes the answer into out; an error
// says what the provider answered.
func (g generator) post(ctx context.Context, u string, header http.Header, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponse))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &e) // no message: the status says enough
		msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if e.Error.Message != "" {
			// The provider's own words, bounded as web_search bounds them.
			msg += ": " + content.Head(content.ValidUTF8(e.Error.Message), 200, "…")
		}
		return fmt.Errorf("the provider answered %s", msg)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the provider's answer is not the JSON expected: %v", err)
	}
	return nil
}

// save writes the pictures into the workspace and returns them in the
// seeds' shape: for each, a MEDIA:<path> line and the image.
func save(ctx context.Context, tc *tool.Context, pics []picture, want, model string) (tool.Result, error) {
	var res tool.Result
	var paths []string
	for i, p := range pics {
		if p.mime == "" || !strings.HasPrefix(p.mime, "image/") {
			p.mime = http.DetectContentType(p.data)
		}
		name := filePath(want, i, len(pics), p.mime)
		if dir := path.Dir(name); dir != "." {
			if err := tc.FS.MkdirAll(ctx, dir); err != nil {
				return tool.Result{}, tool.InputErrorf("cannot make the folder %s: %v", dir, err)
			}
		}
		if err := tc.FS.WriteFile(ctx, name, p.data, 0o644); err != nil {
			return tool.Result{}, tool.InputErrorf("cannot save %s: %v", name, err)
		}
		one := tool.Media(name, p.data, p.mime)
		res.Content = append(res.Content, one.Content...)
		paths = append(paths, name)
	}
	details := map[string]any{"path": paths[0], "model": model, "mimeType": pics[0].mime, "bytes": len(pics[0].data)}
	if len(paths) > 1 {
		details["paths"] = paths
	}
	if pics[0].revised != "" {
		details["revisedPrompt"] = pics[0].revised
	}
	res.Details = details
	return res, nil
}

// filePath is where the i-th of n pictures goes: want (default
// images/generated-ID with the type's extension), with -1, -2, … before
// the extension when there are several.
func filePath(want string, i, n int, mimeType string) string {
	if want == "" {
		want = "images/" + randid.New("generated-", 8) + extension(mimeType)
	}
	want = path.Clean(strings.ReplaceAll(want, "\\", "/"))
	if n == 1 {
		return want
	}
	ext := path.Ext(want)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(want, ext), i+1, ext)
}

// extension is the file extension of an image type (.png by default).
func extension(mimeType string) string {
	switch mimeType {
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	}
	return ".png"
}
