package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// canvasURL finds a canvas URL in a request to the model.
var canvasURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/[A-Za-z0-9]+/canvas/[^/\s"\\]+/`)

// TestRunDeliversCanvasActions: the agent pushes an A2UI surface with a
// button; while it runs, a person presses it (the page's POST); the press
// reaches the agent as a follow-up message, which it answers. The canvas's
// URL is printed, and a refused push leaves the model told the line and
// the field.
func TestRunDeliversCanvasActions(t *testing.T) {
	t.Parallel()
	surface := strings.Join([]string{
		`{"version":"v0.9","createSurface":{"surfaceId":"review","catalogId":"basic"}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"review","components":[{"id":"root","component":"Button","child":"label","action":{"event":{"name":"approve","context":{"note":{"path":"/note"}}}}},{"id":"label","component":"Text","text":"Approve"}]}}`,
		`{"version":"v0.9","updateDataModel":{"surfaceId":"review","path":"/note","value":"looks good"}}`,
	}, "\n")
	push, _ := json.Marshal(map[string]string{"action": "a2ui_push", "jsonl": surface})
	bad, _ := json.Marshal(map[string]string{"action": "a2ui_push", "jsonl": `{"version":"v0.9","updateComponents":{"surfaceId":"review","components":[{"id":"root","component":"Text"}]}}`})
	pressed := make(chan string, 1)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "Here is the review.",
			llmtest.Call{ID: "call_1", Name: "canvas", Args: string(push)},
			llmtest.Call{ID: "call_2", Name: "canvas", Args: string(bad)})},
		// The person presses the button while the model answers.
		llmtest.Response{Body: llmtest.Chat("", "Waiting for your review."), Check: func(body []byte) *llmtest.Response {
			pressed <- press(canvasURL.FindString(string(body)))
			return nil
		}},
		llmtest.Response{Body: llmtest.Chat("", "Approved, thanks.")})
	r := runCLI(t, "", "run", "--model", "vllm/m", "--base-url", s.URL+"/v1", "--workspace", t.TempDir(), "show the review").expect(t, 0)
	if got := <-pressed; got != "" {
		t.Fatalf("pressing the button: %s", got)
	}
	if r.stdout != "Approved, thanks.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if !canvasURL.MatchString(r.stderr) || !strings.Contains(r.stderr, "toolbelt: canvas http://127.0.0.1:") {
		t.Errorf("the canvas URL is not printed: %s", r.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := compactJSON(t, reqs[1].Body)
	if !strings.Contains(second, "line 1: updateComponents.components[0]") || !strings.Contains(second, "text") {
		t.Errorf("the refused push is not explained by line and field: %s", second)
	}
	third := compactJSON(t, reqs[2].Body)
	if !strings.Contains(third, `the user triggered \"approve\" on surface \"review\"`) || !strings.Contains(third, `\"note\":\"looks good\"`) {
		t.Errorf("the press is not in the follow-up: %s", third)
	}
}

// press posts a press of the review's button to the canvas at url, as its
// page does, and returns what went wrong ("" when nothing did).
func press(url string) string {
	if url == "" {
		return "no canvas URL in the tool result"
	}
	body := `{"surfaceId":"review","sourceComponentId":"root","name":"approve","context":{"note":"looks good"}}`
	resp, err := http.Post(url+"action", "application/json", strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%s: %s", resp.Status, b)
	}
	return ""
}
