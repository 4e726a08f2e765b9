package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

var twoTools = json.RawMessage(`[{"name":"read","description":"Read a file.","input_schema":{"type":"object"}},{"name":"write","input_schema":{"type":"object"}}]`)

// turns sends a conversation's first two requests — the prompt, then the
// prompt with a call and its result — and returns the bodies the server
// received.
func turns(t *testing.T, spec, system string, tools json.RawMessage) [2][]byte {
	t.Helper()
	prov := strings.SplitN(spec, "/", 2)[0]
	body := llmtest.Chat
	if prov == "anthropic" {
		body = llmtest.Anthropic
	}
	s := llmtest.New(t, llmtest.Response{Body: body("", "", llmtest.Call{ID: "toolu_01", Name: "read", Args: `{"path":"a.txt"}`})}, llmtest.Response{Body: body("", "done")})
	c := client(t, spec, baseFor(s, spec))
	msgs := []llm.Message{llm.UserText("read a.txt")}
	for range 2 {
		m, err := c.Stream(context.Background(), llm.Request{System: system, Messages: msgs, Tools: tools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m, llm.Message{Role: llm.RoleToolResult, ToolCallID: "toolu_01", ToolName: "read", Content: []llm.Block{{Type: llm.BlockText, Text: "alpha"}}})
	}
	r := s.Requests()
	return [2][]byte{r[0].Body, r[1].Body}
}

// TestRequestPrefixIsStable: a conversation's second request starts with
// its first, byte for byte, up to the messages and through the messages
// the first sent — the model, the options, the tools in their order and
// the system prompt come before the messages — so a provider's prefix
// cache (OpenAI's automatic one) hits.
func TestRequestPrefixIsStable(t *testing.T) {
	tools := json.RawMessage(`[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}},{"type":"function","function":{"name":"write","parameters":{"type":"object"}}}]`)
	for _, spec := range []string{"openai/gpt-test", "ollama/llama3.2"} {
		b := turns(t, spec, "be brief", tools)
		i := bytes.Index(b[0], []byte(`"messages":`))
		if i < 0 || !bytes.Contains(b[0][:i], tools) {
			t.Fatalf("%s: the tools are not before the messages, as they were given:\n%s", spec, b[0])
		}
		first := bytes.TrimSuffix(b[0], []byte("]}"))
		if !bytes.HasPrefix(b[1], first) {
			t.Errorf("%s: the second request does not start with the first:\n%s\n%s", spec, b[0], b[1])
		}
	}
}

// anthropicBody is the part of an Anthropic request the cache tests read.
type anthropicBody struct {
	System json.RawMessage `json:"system"`
	Tools  []struct {
		Name         string          `json:"name"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	Messages []struct {
		Content []map[string]json.RawMessage `json:"content"`
	} `json:"messages"`
}

func parseAnthropic(t *testing.T, b []byte) anthropicBody {
	t.Helper()
	var a anthropicBody
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return a
}

// TestAnthropicCacheBreakpoints: the last tool, the last block of the
// conversation and a system prompt long enough to be cached on its own
// are prompt-cache breakpoints (cache_control ephemeral); nothing else is,
// and a shorter system prompt goes as a string.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	const eph = `{"type":"ephemeral"}`
	long := strings.Repeat("You are a careful agent. ", 200)
	for _, system := range []string{"be brief", long} {
		b := turns(t, "anthropic/x", system, twoTools)
		for turn, body := range b {
			if n := bytes.Count(body, []byte(`"cache_control"`)); system == long && n != 3 || system != long && n != 2 {
				t.Errorf("turn %d: %d breakpoints:\n%s", turn+1, n, body)
			}
			a := parseAnthropic(t, body)
			if len(a.Tools) != 2 || a.Tools[0].CacheControl != nil || string(a.Tools[1].CacheControl) != eph {
				t.Errorf("turn %d: want the last tool (only) marked: %s", turn+1, body)
			}
			last := a.Messages[len(a.Messages)-1].Content
			if string(last[len(last)-1]["cache_control"]) != eph {
				t.Errorf("turn %d: the conversation's last block is not marked: %s", turn+1, body)
			}
			var sys any
			_ = json.Unmarshal(a.System, &sys)
			if system != long {
				if sys != system {
					t.Errorf("turn %d: system %s, want the string", turn+1, a.System)
				}
				continue
			}
			want := `[{"type":"text","text":"` + long + `","cache_control":` + eph + `}]`
			if string(a.System) != want {
				t.Errorf("turn %d: system %.200s…", turn+1, a.System)
			}
		}
	}
}

// TestAnthropicCacheUsageInMessageDelta: the cache counts a server sends
// again in message_delta (as the Messages API does now) are read from there.
func TestAnthropicCacheUsageInMessageDelta(t *testing.T) {
	stream := strings.Replace(llmtest.Anthropic("", "hi"), `"usage":{"output_tokens":42}`,
		`"usage":{"input_tokens":7,"cache_read_input_tokens":900,"cache_creation_input_tokens":50,"output_tokens":42}`, 1)
	s := llmtest.New(t, llmtest.Response{Body: stream})
	m, err := client(t, "anthropic/x", s.URL).Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *m.Usage != (llm.Usage{Input: 7, Output: 42, CacheRead: 900, CacheWrite: 50}) {
		t.Errorf("usage %+v", *m.Usage)
	}
}
