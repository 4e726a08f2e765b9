package toolbelt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// blueDot is a 16×16 PNG, as a data URL.
const blueDot = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAGUlEQVR42mNgWHvjP0V41IBRA0YNGC4GAADcloQfy01I0gAAAABJRU5ErkJggg=="

// TestImageUsesTheConfiguredModels opens a Toolbelt whose only model is
// the top-level one, of a providers: entry pointing at the replay server:
// image analyzes with it (the agent's model), through the entry's URL; the
// same entry marked noImages leaves the tool unavailable, saying why.
func TestImageUsesTheConfiguredModels(t *testing.T) {
	t.Setenv("TOOLBELT_MODEL", "")
	replay := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "A blue dot.")})
	for _, noImages := range []bool{false, true} {
		yaml := "model: local/vision-1\nproviders:\n  local: {base: openai, url: " + replay.URL + "/v1, noImages: " + map[bool]string{false: "false", true: "true"}[noImages] + "}\n"
		cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		msg := call(t, tb, "c1", "image", `{"image":"`+blueDot+`","prompt":"What is it?"}`)
		tb.Close(context.Background())
		text := msg.Content[0].Text
		if noImages {
			if !msg.IsError || !strings.Contains(text, "local/vision-1 takes no images") {
				t.Errorf("noImages: %s, want the tool unavailable, saying the model takes no images", text)
			}
			continue
		}
		if msg.IsError || !strings.Contains(text, "A blue dot.") {
			t.Fatalf("image = %s, want the model's answer", text)
		}
		reqs := replay.Requests()
		if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].JSON(t)["model"] != "vision-1" {
			t.Errorf("requests %+v, want one to the entry's URL for vision-1", reqs)
		}
	}
}
