package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestChat drives toolbelt chat through its standard input: a turn that
// writes a file (shown on stderr as it runs, the answer streamed to
// stdout), /tools, /undo of that turn, a bad /model, and a second turn that
// carries the first in its request.
func TestChat(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Writing.", llmtest.Call{ID: "toolu_W", Name: "write", Args: `{"path":"b.txt","content":"hello"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "Done.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Still here.")})
	input := "write hello into b.txt\n/tools\n/undo\n/model nope/x\n/frobnicate\nare you there?\n/quit\n"
	r := runCLI(t, input, "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--yes").expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after /undo: %v", err)
	}
	for _, want := range []string{"Writing.\n", "Done.\n", "read ", "Still here.\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"→ write {", "✓ write", `unknown provider "nope"`, "unknown command /frobnicate"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || !strings.Contains(compactJSON(t, reqs[2].Body), `"tool_use_id":"toolu_W"`) || !strings.Contains(string(reqs[2].Body), "are you there?") {
		t.Errorf("third request does not carry the conversation: %d requests", len(reqs))
	}
}
