package llm_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tool"
)

// transcript is a conversation with two calls, one failed, and an image in
// a result, written by provider prov.
func transcript(prov string) []llm.Message {
	return []llm.Message{
		llm.UserText("look at a.txt and the logo"),
		{Role: llm.RoleAssistant, Provider: prov, Content: []llm.Block{
			{Type: llm.BlockThinking, Thinking: "I should read.", Signature: "sig-1"},
			{Type: llm.BlockText, Text: "Reading."},
			{Type: llm.BlockToolCall, ID: "call_abcdefghijklmnop", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`), Signature: "tsig-1"},
			{Type: llm.BlockToolCall, ID: "toolu_xyz", Name: "view", Arguments: json.RawMessage(`{"path":"logo.png"}`)},
		}},
		{Role: llm.RoleToolResult, ToolCallID: "call_abcdefghijklmnop", ToolName: "read", Content: []llm.Block{{Type: llm.BlockText, Text: "hello"}}},
		{Role: llm.RoleToolResult, ToolCallID: "toolu_xyz", ToolName: "view", IsError: true, Content: []llm.Block{
			{Type: llm.BlockText, Text: `{"status":"error","tool":"view","error":"too big"}`}, {Type: llm.BlockImage, Data: "aGk=", MIMEType: "image/png"}}},
	}
}

func send(t *testing.T, spec string, msgs []llm.Message) map[string]any {
	t.Helper()
	tools := json.RawMessage(`[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]`)
	return sendRequest(t, spec, llm.Request{System: "be brief", Messages: msgs, Tools: tools})
}

// sendRequest sends req to a replay server speaking spec's wire format and
// returns the request body the server received.
func sendRequest(t *testing.T, spec string, req llm.Request) map[string]any {
	t.Helper()
	prov := strings.SplitN(spec, "/", 2)[0]
	body := map[string]func(string, string, ...llmtest.Call) string{"anthropic": llmtest.Anthropic, "google": llmtest.Gemini, "openai-responses": llmtest.Responses}[prov]
	if body == nil {
		body = llmtest.Chat
	}
	s := llmtest.New(t, llmtest.Response{Body: body("", "ok")})
	base := s.URL + "/v1"
	if prov == "anthropic" || prov == "google" {
		base = s.URL
	}
	if _, err := client(t, spec, base).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	return s.Requests()[0].JSON(t)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRequestAnthropic(t *testing.T) {
	b := send(t, "anthropic/x", transcript("anthropic"))
	got := js(b["messages"])
	for _, want := range []string{
		`{"signature":"sig-1","thinking":"I should read.","type":"thinking"}`,
		`{"id":"call_abcdefghijklmnop","input":{"path":"a.txt"},"name":"read","type":"tool_use"}`,
		`{"content":[{"text":"hello","type":"text"}],"tool_use_id":"call_abcdefghijklmnop","type":"tool_result"}`,
		`"is_error":true`,
		`{"source":{"data":"aGk=","media_type":"image/png","type":"base64"},"type":"image"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("messages lack %s:\n%s", want, got)
		}
	}
	if b["system"] != "be brief" || b["stream"] != true {
		t.Errorf("system %v, stream %v", b["system"], b["stream"])
	}
	// Both results go in one user message, after the assistant's.
	if msgs := b["messages"].([]any); len(msgs) != 3 {
		t.Errorf("%d messages, want user, assistant, user", len(msgs))
	}
}

func TestRequestOpenAIChat(t *testing.T) {
	b := send(t, "openai/x", transcript("openai"))
	got := js(b["messages"])
	for _, want := range []string{
		`{"content":"be brief","role":"system"}`,
		`"tool_calls":[{"function":{"arguments":"{\"path\":\"a.txt\"}","name":"read"},"id":"call_abcdefghijklmnop","type":"function"}`,
		`{"content":"hello","role":"tool","tool_call_id":"call_abcdefghijklmnop"}`,
		`"role":"tool","tool_call_id":"toolu_xyz"`,
		// The image follows the results in a user message.
		`{"image_url":{"url":"data:image/png;base64,aGk="},"type":"image_url"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("messages lack %s:\n%s", want, got)
		}
	}
	if js(b["stream_options"]) != `{"include_usage":true}` {
		t.Errorf("stream_options = %v", b["stream_options"])
	}
	if _, ok := b["parallel_tool_calls"]; ok {
		t.Errorf("parallel_tool_calls sent to openai")
	}
}

func TestRequestMistralQuirks(t *testing.T) {
	b := send(t, "mistral/x", transcript("openai"))
	msgs := b["messages"].([]any)
	var callIDs, resultIDs []string
	for _, m := range msgs {
		m := m.(map[string]any)
		for _, c := range asList(m["tool_calls"]) {
			callIDs = append(callIDs, c.(map[string]any)["id"].(string))
		}
		if id, ok := m["tool_call_id"].(string); ok {
			resultIDs = append(resultIDs, id)
		}
		if m["role"] == "tool" && strings.Contains(js(m), "image") && !strings.Contains(js(m), "omitted") {
			t.Errorf("image sent to mistral: %v", m)
		}
	}
	nine := regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)
	if len(callIDs) != 2 || js(callIDs) != js(resultIDs) || !nine.MatchString(callIDs[0]) || !nine.MatchString(callIDs[1]) || callIDs[0] == callIDs[1] {
		t.Errorf("mistral ids: calls %v, results %v; want the same distinct 9-character ids", callIDs, resultIDs)
	}
	if b["parallel_tool_calls"] != false {
		t.Errorf("parallel_tool_calls = %v, want false", b["parallel_tool_calls"])
	}
	if strings.Contains(js(b), "image_url") {
		t.Errorf("an image went to mistral")
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func TestRequestResponses(t *testing.T) {
	b := send(t, "openai-responses/x", transcript("openai-responses"))
	got := js(b["input"])
	for _, want := range []string{
		`{"arguments":"{\"path\":\"a.txt\"}","call_id":"call_abcdefghijklmnop","name":"read","type":"function_call"}`,
		`{"call_id":"call_abcdefghijklmnop","output":"hello","type":"function_call_output"}`,
		// The image stays in the output of the call it answers.
		`{"call_id":"toolu_xyz","output":[{"text":"{\"status\":\"error\",\"tool\":\"view\",\"error\":\"too big\"}","type":"input_text"},{"detail":"auto","image_url":"data:image/png;base64,aGk=","type":"input_image"}],"type":"function_call_output"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("input lacks %s:\n%s", want, got)
		}
	}
	if n := len(asList(b["input"])); n != 6 {
		t.Errorf("%d input items, want 6 (no user message after the results)", n)
	}
	if b["instructions"] != "be brief" || b["store"] != false {
		t.Errorf("instructions %v, store %v", b["instructions"], b["store"])
	}
}

func TestRequestGemini(t *testing.T) {
	b := send(t, "google/x", transcript("google"))
	got := js(b["contents"])
	for _, want := range []string{
		`{"functionCall":{"args":{"path":"a.txt"},"id":"call_abcdefghijklmnop","name":"read"},"thoughtSignature":"tsig-1"}`,
		`{"functionResponse":{"id":"call_abcdefghijklmnop","name":"read","response":{"output":"hello"}}}`,
		`{"functionResponse":{"id":"toolu_xyz","name":"view","response":{"error":`,
		`{"inlineData":{"data":"aGk=","mimeType":"image/png"}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("contents lack %s:\n%s", want, got)
		}
	}
	if js(b["systemInstruction"]) != `{"parts":[{"text":"be brief"}],"role":"user"}` {
		t.Errorf("systemInstruction = %s", js(b["systemInstruction"]))
	}
	if tools := js(b["tools"]); !strings.HasPrefix(tools, "[") {
		t.Errorf("tools = %s, want a list", tools)
	}
	// A thought signature from another provider is not sent to Gemini.
	b = send(t, "google/x", transcript("openai"))
	if strings.Contains(js(b["contents"]), "tsig-1") {
		t.Errorf("another provider's signature went to Gemini")
	}
}

// TestRequestAudio: audio in a tool result (tts's) goes to Gemini as inline
// data; the other wires get a note in its place, and none of its bytes.
func TestRequestAudio(t *testing.T) {
	const wav = "UklGRiQAAABXQVZF" // base64 of a WAV header
	result := llm.ToolResult(tool.ResultMessage{ToolCallID: "call_abcdefghijklmnop", ToolName: "tts", Content: []tool.Content{
		{Type: tool.TextContent, Text: "MEDIA:tts/a.wav"},
		{Type: tool.AudioContent, Data: wav, MIMEType: "audio/wav"},
	}})
	msgs := []llm.Message{
		llm.UserText("say hi"),
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "call_abcdefghijklmnop", Name: "tts", Arguments: json.RawMessage(`{"text":"hi"}`)}}},
		result,
	}
	if got := js(send(t, "google/x", msgs)["contents"]); !strings.Contains(got, `{"inlineData":{"data":"`+wav+`","mimeType":"audio/wav"}}`) || !strings.Contains(got, "MEDIA:tts/a.wav") {
		t.Errorf("gemini: the audio is not inline data beside the result:\n%s", got)
	}
	for _, spec := range []string{"anthropic/x", "openai/x", "openai-responses/x"} {
		got := js(send(t, spec, msgs))
		if strings.Contains(got, wav) || !strings.Contains(got, "1 audio clip(s) omitted: this model does not accept audio") || !strings.Contains(got, "MEDIA:tts/a.wav") {
			t.Errorf("%s: want the note and the MEDIA line instead of the audio:\n%s", spec, got)
		}
	}
}

// TestRequestEmbeddedResource: no provider takes an embedded resource in a
// tool result: every wire gets it described, a text resource with its
// text, a binary one by its size and none of its bytes.
func TestRequestEmbeddedResource(t *testing.T) {
	const blob = "AAECAwQFBgcICQ=="
	result := llm.ToolResult(tool.ResultMessage{ToolCallID: "call_abcdefghijklmnop", ToolName: "fetch_notes", Content: []tool.Content{
		{Type: tool.ResourceContent, URI: "test://notes", MIMEType: "text/plain", Text: "buy milk"},
		{Type: tool.ResourceContent, URI: "test://blob", MIMEType: "application/octet-stream", Data: blob},
	}})
	msgs := []llm.Message{
		llm.UserText("notes?"),
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "call_abcdefghijklmnop", Name: "fetch_notes", Arguments: json.RawMessage(`{}`)}}},
		result,
	}
	for _, spec := range []string{"anthropic/x", "openai/x", "openai-responses/x", "google/x"} {
		got := js(send(t, spec, msgs))
		if strings.Contains(got, blob) || !strings.Contains(got, `[resource: test://notes, text/plain]\nbuy milk`) ||
			!strings.Contains(got, "[resource: test://blob, application/octet-stream, 10 bytes, binary, not shown]") {
			t.Errorf("%s: want both resources described:\n%s", spec, got)
		}
	}
}
