package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunReadBeforeEdit: in toolbelt run, an edit of a file the session
// has not read is refused and tells the model to read it; after a read
// the edit runs; a file changed on disk by someone else after the read is
// refused again. An agent with readBeforeEdit: false, and a person's
// toolbelt call, are not held to it.
func TestRunReadBeforeEdit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for name, text := range map[string]string{"a.txt": "one\n", "b.txt": "bee\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	editCall := func(id, path, old, new string) llmtest.Call {
		return llmtest.Call{ID: id, Name: "edit", Args: `{"path":"` + path + `","edits":[{"oldText":"` + old + `","newText":"` + new + `"}]}`}
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "", editCall("e1", "a.txt", "one", "two"))},
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "r1", Name: "read", Args: `{"path":"a.txt"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "", editCall("e2", "a.txt", "one", "two"))},
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "r2", Name: "read", Args: `{"path":"b.txt"}`})},
		// Someone else changes b.txt while the model thinks.
		llmtest.Response{Check: func([]byte) *llmtest.Response {
			if err := os.WriteFile(filepath.Join(ws, "b.txt"), []byte("bee, changed by someone else\n"), 0o644); err != nil {
				t.Error(err)
			}
			return &llmtest.Response{Body: llmtest.Anthropic("", "", editCall("e3", "b.txt", "bee", "wasp"))}
		}},
		llmtest.Response{Body: llmtest.Anthropic("", "Done.")})
	r := runCLI(t, "", "run", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--yes", "--json", "edit").expect(t, 0)
	var transcript []struct {
		Role    string `json:"role"`
		IsError bool   `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatal(err)
	}
	if len(transcript) != 12 {
		t.Fatalf("%d messages:\n%s", len(transcript), r.stdout)
	}
	for i, want := range map[int]string{2: "a.txt has not been read in this session", 6: "Edited a.txt", 10: "b.txt changed on disk since this session last read it"} {
		m := transcript[i]
		if m.Role != "toolResult" || m.IsError != (i != 6) || len(m.Content) == 0 || !strings.Contains(m.Content[0].Text, want) {
			t.Errorf("message %d: %+v, want %q", i, m, want)
		}
	}
	for name, want := range map[string]string{"a.txt": "two\n", "b.txt": "bee, changed by someone else\n"} {
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}

	// Off for an agent that says so.
	cfg := writeConfig(t, "agents:\n  free:\n    readBeforeEdit: false\n")
	free := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "", editCall("e4", "b.txt", "bee", "wasp"))},
		llmtest.Response{Body: llmtest.Anthropic("", "Done.")})
	runCLI(t, "", "--config", cfg, "run", "--agent", "free", "--model", "anthropic/x", "--base-url", free.URL, "--workspace", ws, "--yes", "edit").expect(t, 0)
	if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(b) != "wasp, changed by someone else\n" {
		t.Errorf("b.txt after the free agent = %q", b)
	}
	// Never for a person's call.
	runCLI(t, "", "call", "edit", "--workspace", ws, "--yes", "--args", `{"path":"a.txt","edits":[{"oldText":"two","newText":"three"}]}`).expect(t, 0)
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "three\n" {
		t.Errorf("a.txt after toolbelt call = %q", b)
	}
}

// TestMCPReadBeforeEdit: with mcp.readBeforeEdit on, a real MCP client
// session's edit of a file it has not read is refused; after it reads the
// file the edit runs. Without the option the server does not hold its
// clients to it.
func TestMCPReadBeforeEdit(t *testing.T) {
	t.Parallel()
	edit := func(cs *sdk.ClientSession, old, new string) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "edit", Arguments: map[string]any{
			"path": "a.txt", "edits": []map[string]string{{"oldText": old, "newText": new}}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, on := range []bool{true, false} {
		ws := t.TempDir()
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := writeConfig(t, "mcp:\n  readBeforeEdit: false\n")
		if on {
			cfg = writeConfig(t, "mcp:\n  readBeforeEdit: true\n")
		}
		cs, _ := mcpSession(t, sharedEnvironment(t, t.TempDir(), "TOOLBELT_CONFIG="+cfg), ws)
		res := edit(cs, "one", "two")
		if !on {
			if res.IsError {
				t.Errorf("with the option off: %s", textOf(res))
			}
			cs.Close()
			continue
		}
		if !res.IsError || !strings.Contains(textOf(res), "a.txt has not been read in this session") {
			t.Fatalf("edit before reading: %v %s", res.IsError, textOf(res))
		}
		if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "a.txt"}}); err != nil || res.IsError {
			t.Fatalf("read: %v %s", err, textOf(res))
		}
		if res := edit(cs, "one", "two"); res.IsError {
			t.Fatalf("edit after reading: %s", textOf(res))
		}
		cs.Close()
		if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
			t.Errorf("a.txt = %q", b)
		}
	}
}
