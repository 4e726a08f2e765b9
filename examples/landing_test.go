package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/chromium"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

var updateShots = flag.Bool("update-screenshots", false, "copy the screenshots TestLandingPageBuilder takes into examples/landing-page/screenshots (the README shows them)")

// TestLandingPageBuilder runs the landing-page example as a person would —
// `toolbelt run --agent landing-builder "…"` in its directory — against a
// replayed model: the model writes a page with flaws, validate_page
// returns the findings (axe-core's and the responsive checks'), the next
// turn writes the fixed page, which passes, three screenshots are taken at
// the three viewports, and deploy_preview's URL, which serves the fixed
// page, is what the model answers with.
func TestLandingPageBuilder(t *testing.T) {
	if _, err := chromium.Path(); err != nil {
		t.Skip("the landing-page example previews and validates pages in Chromium: " + err.Error())
	}
	t.Parallel()
	tb := bin(t, "toolbelt")
	ws := t.TempDir()
	page := func(name string) string {
		b, err := os.ReadFile(filepath.Join("landing-page", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(id, file, content string) llmtest.Call {
		args, _ := json.Marshal(map[string]string{"filename": file, "content": content})
		return llmtest.Call{ID: id, Name: "write_html", Args: string(args)}
	}
	validate := func(id string) llmtest.Call {
		return llmtest.Call{ID: id, Name: "validate_page", Args: `{"checks": ["accessibility", "responsive", "performance"]}`}
	}
	shot := func(id, viewport string) llmtest.Call {
		return llmtest.Call{ID: id, Name: "preview_screenshot", Args: `{"viewport": "` + viewport + `"}`}
	}
	served := make(chan string, 1)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "I'll write the page.", write("toolu_01", "index.html", page("first.html")), write("toolu_02", "styles.css", page("styles.css")))},
		llmtest.Response{Body: llmtest.Anthropic("", "Let me check its quality.", validate("toolu_03"))},
		llmtest.Response{Body: llmtest.Anthropic("", "Fixing what the checks found.", write("toolu_04", "index.html", page("fixed.html")))},
		llmtest.Response{Body: llmtest.Anthropic("", "Checking again.", validate("toolu_05"))},
		llmtest.Response{Body: llmtest.Anthropic("", "It passes; previewing it.", shot("toolu_06", "desktop"), shot("toolu_07", "tablet"), shot("toolu_08", "mobile"))},
		llmtest.Response{Body: llmtest.Anthropic("", "Deploying a preview.", llmtest.Call{ID: "toolu_09", Name: "deploy_preview", Args: `{}`})},
		llmtest.Response{Check: func(body []byte) *llmtest.Response {
			url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/index\.html`).FindString(toolResult(t, body, "toolu_09"))
			served <- get(url)
			return &llmtest.Response{Body: llmtest.Anthropic("", "Your landing page is ready at "+url)}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tb, "run", "--agent", "landing-builder", "--workspace", ws,
		"--model", "anthropic/claude-test", "--base-url", s.URL, "a landing page for a bakery")
	cmd.Dir = "landing-page"
	data := t.TempDir()
	cmd.Env = append(os.Environ(), "TOOLBELT_DATA="+data, "XDG_CONFIG_HOME="+data, "XDG_DATA_HOME="+data)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolbelt run: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}

	reqs := s.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d model requests, want 7\nstderr:\n%s", len(reqs), stderr.String())
	}
	first := reqs[0].JSON(t)
	var offered []string
	for _, tl := range first["tools"].([]any) {
		offered = append(offered, tl.(map[string]any)["name"].(string))
	}
	slices.Sort(offered)
	if want := []string{"deploy_preview", "preview_screenshot", "read", "validate_page", "write_html"}; !slices.Equal(offered, want) {
		t.Errorf("the agent was offered %q, want only %q", offered, want)
	}
	if !strings.Contains(string(reqs[0].Body), "You are a landing page builder.") {
		t.Errorf("the system prompt is not the agent's:\n%.600s", reqs[0].Body)
	}
	findings := toolResult(t, reqs[2].Body, "toolu_03")
	for _, rule := range []string{"html-has-lang", "image-alt", "meta-viewport", "image-dimensions", "horizontal-overflow", `"viewport": "mobile"`} {
		if !strings.Contains(findings, rule) {
			t.Errorf("the first validation lacks %s:\n%s", rule, findings)
		}
	}
	if passed := toolResult(t, reqs[4].Body, "toolu_05"); !strings.Contains(passed, `"passed": true`) || !strings.Contains(passed, `"issues": []`) {
		t.Errorf("the fixed page does not pass:\n%s", passed)
	}
	for id, file := range map[string]string{"toolu_06": "index-desktop.png", "toolu_07": "index-tablet.png", "toolu_08": "index-mobile.png"} {
		if r := toolResult(t, reqs[5].Body, id); !strings.Contains(r, "MEDIA:screenshots/"+file) || !strings.Contains(r, "[image]") {
			t.Errorf("the result of %s lacks MEDIA:screenshots/%s or its image: %s", id, file, r)
		}
	}
	sizes := map[string][2]int{"desktop": {1440, 900}, "tablet": {768, 1024}, "mobile": {375, 812}}
	for vp, size := range sizes {
		file := filepath.Join(ws, "screenshots", "index-"+vp+".png")
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil || format != "png" || cfg.Width != size[0] || cfg.Height != size[1] {
			t.Errorf("%s: a %s of %d×%d (%v), want a png of %d×%d", file, format, cfg.Width, cfg.Height, err, size[0], size[1])
		}
		if *updateShots {
			if err := os.WriteFile(filepath.Join("landing-page", "screenshots", "index-"+vp+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "index.html")); err != nil || string(b) != page("fixed.html") {
		t.Errorf("index.html in the workspace is not the fixed page (%v)", err)
	}
	if got := <-served; got != page("fixed.html") {
		t.Errorf("the preview URL served %q, want the fixed page", got)
	}
	if !regexp.MustCompile(`Your landing page is ready at http://127\.0\.0\.1:\d+/index\.html`).Match(out) {
		t.Errorf("run printed %q", out)
	}
}

// toolResult returns the text of the tool_result block for the call id in
// an Anthropic request body, images shown as "[image]".
func toolResult(t *testing.T, body []byte, id string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				Content   []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Errorf("the request is not JSON: %v", err)
		return ""
	}
	var text strings.Builder
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Type != "tool_result" || c.ToolUseID != id {
				continue
			}
			for _, part := range c.Content {
				if part.Type == "image" {
					text.WriteString("[image]")
				}
				text.WriteString(part.Text)
			}
		}
	}
	return text.String()
}

// get returns the body url answers with, or the error.
func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
