package image_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	imagetool "github.com/toolbelt/toolbelt/tools/image"
)

// models serves the specs of a test: each provider name maps to a
// built-in provider at a test server's URL.
type models struct {
	urls  map[string]string // provider name → base URL
	agent string
}

func (m models) Client(spec string) (llm.Client, error) {
	name, model, _ := strings.Cut(spec, "/")
	base, ok := m.urls[name]
	if !ok {
		return nil, fmt.Errorf("no provider %s in this test", name)
	}
	p, ok := llm.LookupProvider(name)
	if !ok {
		p, _ = llm.LookupProvider("openai") // a providers: entry based on openai
		p.Name = name
	}
	p.BaseURL = base
	return llm.NewClient(p, model, llm.Options{APIKey: "sk-test", Retry: &llm.Retry{Attempts: 1}})
}

func (m models) AgentModel(string) string { return m.agent }

// harness is a workspace, its context and a runner with the image tool.
type harness struct {
	t      *testing.T
	ws     string
	reg    *registry.Registry
	tc     *tool.Context
	runner *invoke.Runner
}

func newHarness(t *testing.T, m models, settings map[string]any, allowHosts ...string) *harness {
	t.Helper()
	reg := registry.New()
	err := imagetool.Register(reg, imagetool.Options{Getenv: func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-openai", "GEMINI_API_KEY": "gm-key"}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	b, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	hosts := []any{}
	for _, h := range allowHosts {
		hosts = append(hosts, h)
	}
	tc := &tool.Context{
		Identity: tool.Identity{Workspace: ws, SessionKey: "s", Owner: true}, FSRoot: ws, FS: b,
		Config: tool.Config{imagetool.ConfigKey: settings, "web_fetch": map[string]any{"allowHosts": hosts}},
	}
	imagetool.ModelsService.Set(tc, m)
	r := invoke.New(reg, tc, invoke.WithConfirmer(invoke.AutoApprove), invoke.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return &harness{t: t, ws: ws, reg: reg, tc: tc, runner: r}
}

// call runs the image tool with args.
func (h *harness) call(args map[string]any) tool.ResultMessage {
	h.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.runner.Run(context.Background(), tool.Call{ID: "call_1", Name: "image", Arguments: raw})
}

// ok runs a call that must succeed.
func (h *harness) ok(args map[string]any) tool.ResultMessage {
	h.t.Helper()
	msg := h.call(args)
	if msg.IsError {
		h.t.Fatalf("image %v failed: %+v", args, msg.Content)
	}
	return msg
}

// fails runs a call that must fail and returns its text.
func (h *harness) fails(args map[string]any) string {
	h.t.Helper()
	msg := h.call(args)
	if !msg.IsError {
		h.t.Fatalf("image %v succeeded: %+v", args, msg.Content)
	}
	return msg.Content[0].Text
}

// picture encodes a w×h image of one color as PNG or JPEG.
func picture(t testing.TB, w, h int, jpg bool) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	var err error
	if jpg {
		err = jpeg.Encode(&buf, img, nil)
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// size decodes a base64 image's size.
func size(t testing.TB, b64 string) (int, int) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

// TestAnalyze sends a workspace file (too large: fitted first), an image
// fetched by URL and a data URL with the prompt to the configured model
// through the replay server, and returns the model's answer.
func TestAnalyze(t *testing.T) {
	t.Parallel()
	replay := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "Three pictures of gradients.")})
	small := picture(t, 40, 30, true)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		w.Write(small)
	}))
	t.Cleanup(site.Close)
	h := newHarness(t, models{urls: map[string]string{"openai": replay.URL + "/v1"}}, map[string]any{"model": "openai/gpt-4o"}, strings.TrimPrefix(site.URL, "http://"))
	if err := os.WriteFile(filepath.Join(h.ws, "big.png"), picture(t, 2400, 600, false), 0o644); err != nil {
		t.Fatal(err)
	}
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(picture(t, 8, 8, false))
	msg := h.ok(map[string]any{"image": "big.png", "images": []string{site.URL + "/pic", dataURL}, "prompt": "What do these show?"})
	if got := msg.Content[0].Text; !strings.Contains(got, "Three pictures of gradients.") {
		t.Errorf("answer %q, want the model's text", got)
	}
	reqs := replay.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" {
		t.Fatalf("requests %+v, want one chat completion", reqs)
	}
	body := reqs[0].JSON(t)
	if body["model"] != "gpt-4o" {
		t.Errorf("model %v, want gpt-4o", body["model"])
	}
	parts := body["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if len(parts) != 4 || parts[0].(map[string]any)["text"] != "What do these show?" {
		t.Fatalf("user content %v, want the prompt and three images", parts)
	}
	var sizes [][2]int
	for _, p := range parts[1:] {
		u := p.(map[string]any)["image_url"].(map[string]any)["url"].(string)
		_, data, _ := strings.Cut(u, ";base64,")
		w, h := size(t, data)
		sizes = append(sizes, [2]int{w, h})
	}
	if want := [][2]int{{1200, 300}, {40, 30}, {8, 8}}; fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("image sizes sent %v, want %v (the large one fitted)", sizes, want)
	}
	d, _ := msg.Details.(map[string]any)
	if d["model"] != "openai/gpt-4o" {
		t.Errorf("details %v, want the model", d)
	}
}

// TestAnalyzeWithTheAgentsModel falls back to the agent's model, and
// refuses one that takes no images.
func TestAnalyzeWithTheAgentsModel(t *testing.T) {
	t.Parallel()
	replay := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "A tiny square.")})
	h := newHarness(t, models{urls: map[string]string{"anthropic": replay.URL}, agent: "anthropic/claude-sonnet-4-5"}, nil)
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(picture(t, 8, 8, false))
	msg := h.ok(map[string]any{"image": dataURL})
	if !strings.Contains(msg.Content[0].Text, "A tiny square.") {
		t.Errorf("answer %+v", msg.Content)
	}
	body := replay.Requests()[0].JSON(t)
	blocks := body["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if blocks[0].(map[string]any)["text"] != "Describe the image." || blocks[1].(map[string]any)["type"] != "image" {
		t.Errorf("content %v, want the default prompt and the image", blocks)
	}

	for name, m := range map[string]models{
		"none":      {},
		"no images": {urls: map[string]string{"mistral": "http://127.0.0.1:1"}, agent: "mistral/mistral-large"},
	} {
		h := newHarness(t, m, nil)
		var why error
		if _, ok := h.reg.Resolve("image", h.tc, func(_ string, err error) { why = err }); ok {
			t.Errorf("%s: the tool resolved without a model that takes images", name)
		}
		var nh *tool.NotHere
		if !errors.As(why, &nh) || !strings.Contains(why.Error(), "tools.image.model") {
			t.Errorf("%s: reason %v, want a NotHere naming tools.image.model", name, why)
		}
	}
}

// TestAnalyzeURLsUnderWebFetchRules refuses a loopback URL web_fetch's
// settings do not allow, and a workspace path that leaves it.
func TestAnalyzeURLsUnderWebFetchRules(t *testing.T) {
	t.Parallel()
	replay := llmtest.New(t)
	h := newHarness(t, models{urls: map[string]string{"openai": replay.URL + "/v1"}}, map[string]any{"model": "openai/gpt-4o"})
	msg := h.fails(map[string]any{"image": replay.URL + "/secret.png"})
	if !strings.Contains(msg, "allowHosts") {
		t.Errorf("a loopback URL: %q, want the guard's refusal naming allowHosts", msg)
	}
	if msg := h.fails(map[string]any{"image": "../outside.png"}); !strings.Contains(msg, "outside.png") {
		t.Errorf("a path out of the workspace: %q", msg)
	}
	if n := len(replay.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

// TestGenerateOpenAI asks an Images API fake (a providers: entry based on
// openai) for two images and saves them in the seeds' result shape.
func TestGenerateOpenAI(t *testing.T) {
	t.Parallel()
	img := picture(t, 16, 16, false)
	var got map[string]any
	var auth, path string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		json.NewDecoder(r.Body).Decode(&got)
		b64 := base64.StdEncoding.EncodeToString(img)
		fmt.Fprintf(w, `{"created":1,"data":[{"b64_json":%q,"revised_prompt":"a fox, painted"},{"b64_json":%q}]}`, b64, b64)
	}))
	t.Cleanup(api.Close)
	h := newHarness(t, models{urls: map[string]string{"openai": api.URL + "/v1"}}, map[string]any{"generateModel": "openai/dall-e-3"})
	msg := h.ok(map[string]any{"action": "generate", "prompt": "a fox", "size": "1024x1024", "n": 2, "path": "art/fox.png"})
	if path != "/v1/images/generations" || auth != "Bearer sk-openai" {
		t.Errorf("request to %s with %q, want /v1/images/generations with the key", path, auth)
	}
	want := map[string]any{"model": "dall-e-3", "prompt": "a fox", "n": float64(2), "size": "1024x1024", "response_format": "b64_json"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("request body %v, want %v", got, want)
	}
	if len(msg.Content) != 4 || msg.Content[0].Text != "MEDIA:art/fox-1.png" || msg.Content[1].Type != tool.ImageContent || msg.Content[2].Text != "MEDIA:art/fox-2.png" {
		t.Fatalf("content %+v, want MEDIA:<path> and the image for each", msg.Content)
	}
	for _, name := range []string{"art/fox-1.png", "art/fox-2.png"} {
		if b, err := os.ReadFile(filepath.Join(h.ws, name)); err != nil || !bytes.Equal(b, img) {
			t.Errorf("%s: %v, want the generated image saved", name, err)
		}
	}
	d, _ := msg.Details.(map[string]any)
	if d["path"] != "art/fox-1.png" || d["revisedPrompt"] != "a fox, painted" {
		t.Errorf("details %v", d)
	}
	// Analysis is not configured: the tool says so instead of failing later.
	if msg := h.fails(map[string]any{"image": "art/fox-1.png"}); !strings.Contains(msg, "tools.image.model") {
		t.Errorf("analysis without a model: %q", msg)
	}
}

// TestGenerateCompatibleByURL reads an image a compatible server answers
// by URL, fetched under web_fetch's rules; gpt-image models are not sent
// response_format.
func TestGenerateCompatibleByURL(t *testing.T) {
	t.Parallel()
	img := picture(t, 10, 10, true)
	var got map[string]any
	mux := http.NewServeMux()
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	mux.HandleFunc("/v1/images/generations", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		fmt.Fprintf(w, `{"data":[{"url":%q}]}`, api.URL+"/files/1")
	})
	mux.HandleFunc("/files/1", func(w http.ResponseWriter, r *http.Request) { w.Write(img) })
	h := newHarness(t, models{urls: map[string]string{"local": api.URL + "/v1"}}, map[string]any{"generateModel": "local/gpt-image-1"}, strings.TrimPrefix(api.URL, "http://"))
	msg := h.ok(map[string]any{"action": "generate", "prompt": "a lake"})
	if _, has := got["response_format"]; has || got["model"] != "gpt-image-1" {
		t.Errorf("request body %v, want gpt-image-1 without response_format", got)
	}
	p, _ := msg.Details.(map[string]any)["path"].(string)
	if !strings.HasPrefix(p, "images/generated-") || !strings.HasSuffix(p, ".jpg") || msg.Content[0].Text != "MEDIA:"+p {
		t.Errorf("path %q, content %+v: want images/generated-ID.jpg named by MEDIA:", p, msg.Content[0])
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, p)); err != nil || !bytes.Equal(b, img) {
		t.Errorf("%s: %v, want the fetched image saved", p, err)
	}
}

// TestGenerateGemini asks a Gemini generateContent fake for an image and
// saves the inlineData part.
func TestGenerateGemini(t *testing.T) {
	t.Parallel()
	img := picture(t, 16, 9, false)
	var got map[string]any
	var key, path string
	var hits atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		key, path = r.Header.Get("x-goog-api-key"), r.URL.Path
		json.NewDecoder(r.Body).Decode(&got)
		fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Here is your banner."},{"inlineData":{"mimeType":"image/png","data":%q}}]}}]}`, base64.StdEncoding.EncodeToString(img))
	}))
	t.Cleanup(api.Close)
	h := newHarness(t, models{urls: map[string]string{"google": api.URL}}, map[string]any{"generateModel": "google/gemini-2.5-flash-image"})
	msg := h.ok(map[string]any{"action": "generate", "prompt": "a banner", "size": "1792x1008", "path": "banner.png"})
	if path != "/v1beta/models/gemini-2.5-flash-image:generateContent" || key != "gm-key" {
		t.Errorf("request to %s with key %q", path, key)
	}
	want := `map[contents:[map[parts:[map[text:a banner]] role:user]] generationConfig:map[imageConfig:map[aspectRatio:16:9] responseModalities:[TEXT IMAGE]]]`
	if fmt.Sprint(got) != want {
		t.Errorf("request body %v, want %s", got, want)
	}
	if msg.Content[0].Text != "MEDIA:banner.png" || msg.Content[1].MIMEType != "image/png" {
		t.Errorf("content %+v", msg.Content)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "banner.png")); err != nil || !bytes.Equal(b, img) {
		t.Errorf("banner.png: %v", err)
	}
	if d := msg.Details.(map[string]any); d["revisedPrompt"] != "Here is your banner." {
		t.Errorf("details %v", d)
	}
	// Gemini makes one image a request: n of them take n requests.
	before := hits.Load()
	msg = h.ok(map[string]any{"action": "generate", "prompt": "a banner", "n": 2, "path": "b.png"})
	if n := hits.Load() - before; n != 2 || msg.Content[0].Text != "MEDIA:b-1.png" || msg.Content[2].Text != "MEDIA:b-2.png" {
		t.Errorf("n 2: %d requests, content %+v", n, msg.Content)
	}
}

// TestGenerateErrors says what the provider answered to a refused prompt,
// and that a provider without an image API cannot generate.
func TestGenerateErrors(t *testing.T) {
	t.Parallel()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Your request was rejected by the safety system.","type":"image_generation_user_error"}}`)
	}))
	t.Cleanup(api.Close)
	h := newHarness(t, models{urls: map[string]string{"openai": api.URL + "/v1"}}, map[string]any{"generateModel": "openai/dall-e-3"})
	msg := h.fails(map[string]any{"action": "generate", "prompt": "something"})
	if !strings.Contains(msg, "HTTP 400: Your request was rejected by the safety system.") {
		t.Errorf("refused prompt: %q, want the provider's status and message", msg)
	}
	if entries, _ := os.ReadDir(h.ws); len(entries) != 0 {
		t.Errorf("the workspace holds %d entries after a failure, want none", len(entries))
	}
	h = newHarness(t, models{urls: map[string]string{"anthropic": api.URL}}, map[string]any{"generateModel": "anthropic/claude-sonnet-4-5"})
	if msg := h.fails(map[string]any{"action": "generate", "prompt": "something"}); !strings.Contains(msg, "no image generation API") {
		t.Errorf("anthropic: %q", msg)
	}
}
