package docs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// notDone is every item of the documents' "Not done yet" lists, each with
// a check that finds the feature in the program: a page must not name as
// missing what the CLI has. An item is a bullet of the section, named here
// by how its text starts.
var notDone = []struct {
	page, item string
	exists     func(t *testing.T, bin string) bool
}{
	{"agent.md", "Starting a tool before the rest of the model's message", toolStartsMidMessage},
	{"agents.md", "A session host for MCP clients", mcpHostsSessions},
}

// TestNotDoneIsNotDone checks the "Not done yet" sections of the
// documents: each is a list whose every item has its check in notDone,
// every entry of notDone is still in its list, and no check finds the
// feature its item says is missing.
func TestNotDoneIsNotDone(t *testing.T) {
	bin := filepath.Join(toolbelt(t), "toolbelt")
	listed := map[string]bool{}
	for _, file := range documents(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		page := filepath.Base(file)
		for _, item := range notDoneItems(t, file, string(raw)) {
			n := 0
			for _, e := range notDone {
				if e.page == page && strings.HasPrefix(item, e.item) {
					listed[e.page+": "+e.item] = true
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: the item %q of Not done yet has %d checks in notDone (docs/notdone_test.go), want 1: add how to tell it exists", file, item, n)
			}
		}
	}
	for _, e := range notDone {
		if !listed[e.page+": "+e.item] {
			t.Errorf("notDone names %q of %s, which its Not done yet list no longer has: remove the entry", e.item, e.page)
			continue
		}
		if e.exists(t, bin) {
			t.Errorf("docs/%s says %q is not done, but the program has it: take it off the list and document it", e.page, e.item)
		}
	}
}

// notDoneItems returns the items of a document's "## Not done yet"
// section: its bullets, each joined with its indented continuation lines.
// Any other text there is an error, as it could name a missing feature no
// check covers.
func notDoneItems(t *testing.T, file, doc string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Not done yet\n")
	if !ok {
		return nil
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var items []string
	for _, l := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(l, "- "):
			items = append(items, strings.TrimPrefix(l, "- "))
		case strings.HasPrefix(l, "  ") && len(items) > 0:
			items[len(items)-1] += " " + strings.TrimSpace(l)
		case strings.TrimSpace(l) != "":
			t.Errorf("%s: Not done yet holds %q, which is not an item of its list: write each missing feature as a bullet, with its check in docs/notdone_test.go", file, l)
		}
	}
	return items
}

// toolStartsMidMessage says calls start before the model's message has
// ended when, in `toolbelt run --events` against a replayed stream of two
// calls, the first call starts before the assistant's message_end.
func toolStartsMidMessage(t *testing.T, bin string) bool {
	ws := t.TempDir()
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "",
			llmtest.Call{ID: "toolu_1", Name: "read", Args: `{"path":"a.txt"}`},
			llmtest.Call{ID: "toolu_2", Name: "read", Args: `{"path":"b.txt"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "Both read.")})
	cmd := exec.Command(bin, "run", "--model", "anthropic/claude-test", "--base-url", s.URL, "--workspace", ws, "--events", "read a.txt and b.txt")
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1", "ANTHROPIC_API_KEY=test"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolbelt run --events: %v\n%s", err, out)
	}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("an event that is not JSON: %v: %s", err, l)
		}
		switch {
		case ev.Type == "tool_execution_start", ev.Type == "message_end" && ev.Message.Role == "assistant":
			order = append(order, ev.Type)
		}
	}
	if len(order) < 2 {
		t.Fatalf("the run's events have no assistant message_end and tool_execution_start: %s", out)
	}
	return order[0] == "tool_execution_start"
}

// mcpHostsSessions says MCP clients have a session host when
// `toolbelt mcp`, with an agent configured, takes a sessions_spawn call
// instead of refusing it for want of one.
func mcpHostsSessions(t *testing.T, bin string) bool {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "toolbelt.yaml"), []byte("agents:\n  lead:\n    model: ollama/qwen3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i, m := range []string{
		`"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"docs","version":"1"}}`,
		`"method":"notifications/initialized"`,
		`"method":"tools/call","params":{"name":"sessions_spawn","arguments":{"task":"say hi"}}`,
	} {
		id := fmt.Sprintf(`"id":%d,`, i)
		if strings.Contains(m, "notifications/") {
			id = ""
		}
		in.WriteString(`{"jsonrpc":"2.0",` + id + m + "}\n")
	}
	cmd := exec.Command(bin, "mcp", "--profile", "full")
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolbelt mcp: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"id":2`) {
		t.Fatalf("toolbelt mcp did not answer the sessions_spawn call: %s", out)
	}
	return !strings.Contains(string(out), "sessions_spawn needs a session host")
}
