package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// benchTools returns a list of n tools in the format of Chat Completions
// (chat) or Anthropic, about 140 bytes of schema and description each.
func benchTools(n int, chat bool) json.RawMessage {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		params := `{"type":"object","properties":{"path":{"type":"string","description":"The file, relative to the workspace."},"limit":{"type":"integer","minimum":1}},"required":["path"]}`
		desc := "Read a file of the workspace: its lines from offset, at most limit of them."
		if chat {
			fmt.Fprintf(&b, `{"type":"function","function":{"name":"tool_%d","description":%q,"parameters":%s}}`, i, desc, params)
		} else {
			fmt.Fprintf(&b, `{"name":"tool_%d","description":%q,"input_schema":%s}`, i, desc, params)
		}
	}
	b.WriteByte(']')
	return json.RawMessage(b.String())
}

// BenchmarkStreamTurn is one model turn of a conversation ten calls long,
// as the agent loop makes it: the request (170 tools, the transcript) is
// built and sent, and the answer — a call in fragments — read, against a
// server on 127.0.0.1 that answers at once.
func BenchmarkStreamTurn(b *testing.B) {
	for _, spec := range []string{"openai/gpt-test", "anthropic/claude-test"} {
		b.Run(strings.SplitN(spec, "/", 2)[0], func(b *testing.B) {
			chat := strings.HasPrefix(spec, "openai")
			body := llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_01", Name: "tool_1", Args: `{"path":"file.txt"}`})
			if chat {
				body = llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "tool_1", Args: `{"path":"file.txt"}`})
			}
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, body)
			}))
			defer s.Close()
			base := s.URL
			if chat {
				base += "/v1"
			}
			c, err := llm.New(spec, llm.Options{BaseURL: base, APIKey: "k"})
			if err != nil {
				b.Fatal(err)
			}
			msgs := []llm.Message{llm.UserText("read file.txt ten times")}
			result := strings.Repeat(strings.Repeat("x", 63)+"\n", 64)
			for i := range 10 {
				id := fmt.Sprintf("toolu_%02d", i)
				msgs = append(msgs,
					llm.Message{Role: llm.RoleAssistant, Provider: strings.SplitN(spec, "/", 2)[0], Content: []llm.Block{{Type: llm.BlockToolCall, ID: id, Name: "tool_1", Arguments: json.RawMessage(`{"path":"file.txt"}`)}}},
					llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "tool_1", Content: []llm.Block{{Type: llm.BlockText, Text: result}}})
			}
			req := llm.Request{System: "You are a careful coding agent.", Messages: msgs, Tools: benchTools(170, chat)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Stream(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
