package llm_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tool"
)

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid: " + string(raw)
	}
	return b.String()
}

var fastRetry = &llm.Retry{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond, MaxWait: 5 * time.Second}

func client(t *testing.T, spec, base string) llm.Client {
	t.Helper()
	c, err := llm.New(spec, llm.Options{BaseURL: base, APIKey: "test-key", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// baseFor returns the base URL the official SDK of spec's provider takes.
func baseFor(s *llmtest.Server, spec string) string {
	switch strings.SplitN(spec, "/", 2)[0] {
	case "anthropic", "google":
		return s.URL
	}
	return s.URL + "/v1"
}

// streams are one response per wire format: a thought, text and two
// parallel calls, the first split in 1-byte fragments.
var streams = []struct {
	spec, path string
	body       func(thinking, text string, calls ...llmtest.Call) string
}{
	{"anthropic/claude-test", "/v1/messages", llmtest.Anthropic},
	{"openai/gpt-test", "/v1/chat/completions", llmtest.Chat},
	{"openai-responses/gpt-test", "/v1/responses", llmtest.Responses},
	{"google/gemini-test", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", llmtest.Gemini},
	{"ollama/llama-test", "/v1/chat/completions", llmtest.Chat},
}

func TestStreamAssemblesParallelCallsFromFragments(t *testing.T) {
	for _, p := range streams {
		t.Run(p.spec, func(t *testing.T) {
			calls := []llmtest.Call{
				{ID: "call_A1", Name: "read", Args: `{"path": "dir/a \"b\".txt", "limit": 10}`, Piece: 1, Signature: "c2lnLUE="},
				{ID: "call_B2", Name: "list", Args: `{"path": "."}`},
			}
			s := llmtest.New(t, llmtest.Response{Body: p.body("Let me look.", "Reading both.", calls...), Chunk: 7})
			c := client(t, p.spec, baseFor(s, p.spec))
			var events []llm.Event
			msg, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText("go")}}, func(e llm.Event) { events = append(events, e) })
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Requests()[0].Path; got != p.path {
				t.Errorf("request path = %s, want %s", got, p.path)
			}
			got := msg.ToolCalls()
			if len(got) != 2 {
				t.Fatalf("tool calls = %+v", msg.Content)
			}
			if got[0].Name != "read" || compact(got[0].Arguments) != `{"path":"dir/a \"b\".txt","limit":10}` || got[1].Name != "list" || compact(got[1].Arguments) != `{"path":"."}` {
				t.Errorf("calls = %s %s, %s %s", got[0].Name, got[0].Arguments, got[1].Name, got[1].Arguments)
			}
			if !strings.HasPrefix(p.spec, "google") && (got[0].ID != "call_A1" || got[1].ID != "call_B2") {
				t.Errorf("ids = %s, %s; want them as issued", got[0].ID, got[1].ID)
			}
			if strings.HasPrefix(p.spec, "google") && got[0].Signature != "c2lnLUE=" {
				t.Errorf("thoughtSignature = %q, want it kept", got[0].Signature)
			}
			if msg.Text() != "Reading both." || msg.StopReason != "toolUse" {
				t.Errorf("text %q, stop %q", msg.Text(), msg.StopReason)
			}
			var thinking string
			for _, b := range msg.Content {
				thinking += b.Thinking
			}
			if thinking != "Let me look." {
				t.Errorf("thinking = %q", thinking)
			}
			if msg.Usage == nil || msg.Usage.Input == 0 || msg.Usage.Output == 0 {
				t.Errorf("usage = %+v", msg.Usage)
			}
			// Arguments are shown growing: several partial parses of the
			// first call, each an object, before its end.
			partials, ends := 0, 0
			for _, e := range events {
				if e.Type == llm.EventToolCallDelta && e.Arguments != nil {
					var m map[string]any
					if err := json.Unmarshal(e.Arguments, &m); err != nil {
						t.Fatalf("partial arguments %s: %v", e.Arguments, err)
					}
					partials++
				}
				if e.Type == llm.EventToolCallEnd {
					seedsToolCallEnd(t, e, calls[ends])
					ends++
				}
			}
			if !strings.HasPrefix(p.spec, "google") && partials < 5 {
				t.Errorf("%d partial argument parses, want several", partials)
			}
			if ends != 2 {
				t.Errorf("%d toolcall_end events, want 2", ends)
			}
		})
	}
}

// seedsToolCallEnd checks that toolcall_end carries the assembled call as
// the seeds' event does: toolCall {type, id, name, arguments}.
func seedsToolCallEnd(t *testing.T, e llm.Event, want llmtest.Call) {
	t.Helper()
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ToolCall struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCall"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	tc := got.ToolCall
	// Gemini issues no ids: the client makes them.
	if tc.Type != llm.BlockToolCall || tc.ID == "" || tc.ID != e.ID || e.ID != want.ID && !strings.HasPrefix(e.ID, "gemini_call_") || tc.Name != want.Name || compact(tc.Arguments) != compact(json.RawMessage(want.Args)) {
		t.Errorf("toolcall_end = %s, want toolCall {type: toolCall, id: %s, name: %s, arguments: %s}", raw, want.ID, want.Name, want.Args)
	}
}

// TestToolResultCarriesIsError: a tool result in the transcript carries
// isError, false included, as the seeds' result message does; other
// messages carry none.
func TestToolResultCarriesIsError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    llm.Message
		want string
	}{
		{llm.ToolResult(tool.ResultMessage{ToolCallID: "call_abc123", ToolName: "read", Content: []tool.Content{{Type: tool.TextContent, Text: "x"}}}), `"isError":false`},
		{llm.ToolResult(tool.ResultMessage{ToolCallID: "call_abc123", ToolName: "exec", IsError: true}), `"isError":true`},
		{llm.UserText("hi"), ""},
	} {
		raw, err := json.Marshal(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(raw), `"isError"`); tc.want == "" && got != 0 || tc.want != "" && (got != 1 || !strings.Contains(string(raw), tc.want)) {
			t.Errorf("%s message = %s, want %s", tc.m.Role, raw, cmp.Or(tc.want, "no isError"))
		}
		var back llm.Message
		if err := json.Unmarshal(raw, &back); err != nil || back.IsError != tc.m.IsError || back.ToolCallID != tc.m.ToolCallID {
			t.Errorf("read back %s = %+v (%v)", raw, back, err)
		}
	}
}

func TestStreamUsageDetails(t *testing.T) {
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "hi")}, llmtest.Response{Body: llmtest.Chat("", "hi")})
	m, err := client(t, "anthropic/x", s.URL).Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText("x")}}, nil)
	if err != nil || *m.Usage != (llm.Usage{Input: 120, Output: 42, CacheRead: 30, CacheWrite: 10}) {
		t.Errorf("anthropic usage = %+v (%v)", m.Usage, err)
	}
	m, err = client(t, "openai/x", s.URL+"/v1").Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText("x")}}, nil)
	if err != nil || *m.Usage != (llm.Usage{Input: 60, Output: 20, CacheRead: 40}) {
		t.Errorf("openai usage (from the last chunk) = %+v (%v)", m.Usage, err)
	}
}

func TestStreamRepairsMalformedArguments(t *testing.T) {
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "read", Args: `{"path": "a.txt",}`},
		llmtest.Call{ID: "c2", Name: "read", Args: `"{\"path\": \"b.txt\"}"`}, llmtest.Call{ID: "c3", Name: "read", Args: `{"path": "c.t`},
		llmtest.Call{ID: "c4", Name: "read", Args: `<path>d</path>`})})
	m, err := client(t, "openai/x", s.URL+"/v1").Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := m.ToolCalls()
	want := []struct{ args, repair, invalid string }{
		{`{"path": "a.txt"}`, llm.RepairCommas, ""},
		{`{"path": "b.txt"}`, llm.RepairString, ""},
		{`{"path": "c.t"}`, llm.RepairTruncate, ""},
		{`{}`, "", `<path>d</path>`},
	}
	for i, w := range want {
		if string(calls[i].Arguments) != w.args || calls[i].Repair != w.repair || calls[i].InvalidArguments != w.invalid {
			t.Errorf("call %d: %s %q %q; want %s %q %q", i, calls[i].Arguments, calls[i].Repair, calls[i].InvalidArguments, w.args, w.repair, w.invalid)
		}
	}
}

func TestRetry429ThenSuccess(t *testing.T) {
	for _, p := range streams {
		t.Run(p.spec, func(t *testing.T) {
			s := llmtest.New(t,
				llmtest.Response{Status: 429, Header: map[string]string{"Retry-After": "0"}, Body: `{"error":{"type":"rate_limit_error","message":"slow down"}}`},
				llmtest.Response{Status: 503, Body: `{"error":{"message":"overloaded"}}`},
				llmtest.Response{Body: p.body("", "fine")})
			m, err := client(t, p.spec, baseFor(s, p.spec)).Stream(context.Background(), llm.Request{}, nil)
			if err != nil || m.Text() != "fine" {
				t.Fatalf("after 429 and 503: %q, %v", m.Text(), err)
			}
			if n := len(s.Requests()); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
		})
	}
}

func TestRetryGivesUp(t *testing.T) {
	s := llmtest.New(t,
		llmtest.Response{Status: 429, Body: `{"error":{"type":"rate_limit_error","message":"slow down"}}`},
		llmtest.Response{Status: 429, Body: `{"error":{"type":"rate_limit_error","message":"slow down"}}`},
		llmtest.Response{Status: 429, Body: `{"error":{"type":"rate_limit_error","message":"slow down"}}`})
	_, err := client(t, "anthropic/x", s.URL).Stream(context.Background(), llm.Request{}, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 429 || ae.Attempts != 3 || !strings.Contains(err.Error(), "slow down") {
		t.Fatalf("err = %v", err)
	}
	// A Retry-After beyond the policy's patience is not waited for.
	s = llmtest.New(t, llmtest.Response{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: `{"error":{"message":"quota"}}`})
	_, err = client(t, "openai/x", s.URL+"/v1").Stream(context.Background(), llm.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "asks to wait 1h0m0s") || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(s.Requests()))
	}
	// A 400 is not retried.
	s = llmtest.New(t, llmtest.Response{Status: 400, Body: `{"error":{"message":"bad"}}`})
	if _, err = client(t, "openai/x", s.URL+"/v1").Stream(context.Background(), llm.Request{}, nil); err == nil || len(s.Requests()) != 1 {
		t.Fatalf("400: err %v after %d requests", err, len(s.Requests()))
	}
}

// TestUnreachableSaysItsAttempts: a provider that cannot be reached (a
// closed port) fails saying how many times the request was sent, one
// attempt in the singular.
func TestUnreachableSaysItsAttempts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for n, want := range map[int]string{1: "(after 1 attempt)", 2: "(after 2 attempts)"} {
		c, err := llm.New("openai/x", llm.Options{BaseURL: base, APIKey: "k", Retry: &llm.Retry{Attempts: n, Base: time.Millisecond, Max: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Stream(context.Background(), llm.Request{}, nil)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%d attempts: %v, want it to end with %q", n, err, want)
		}
	}
}

func TestContextOverflowRecognised(t *testing.T) {
	for _, c := range []struct{ spec, body string }{
		{"anthropic/x", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`},
		{"openai/x", `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`},
		{"openai-responses/x", `{"error":{"message":"Your input exceeds the context window of this model.","code":"context_length_exceeded"}}`},
		{"google/x", `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`},
		{"ollama/x", `{"error":"the input length exceeds the context length"}`},
		{"llamacpp/x", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`},
	} {
		s := llmtest.New(t, llmtest.Response{Status: 400, Body: c.body})
		_, err := client(t, c.spec, baseFor(s, c.spec)).Stream(context.Background(), llm.Request{}, nil)
		if !errors.Is(err, llm.ErrContextOverflow) || !strings.Contains(err.Error(), "context window") {
			t.Errorf("%s: err = %v, want a context overflow", c.spec, err)
		}
	}
	s := llmtest.New(t, llmtest.Response{Status: 400, Body: `{"error":{"message":"bad tool schema"}}`})
	if _, err := client(t, "openai/x", s.URL+"/v1").Stream(context.Background(), llm.Request{}, nil); errors.Is(err, llm.ErrContextOverflow) {
		t.Errorf("an unrelated 400 counted as an overflow: %v", err)
	}
}

func TestStreamCutMidway(t *testing.T) {
	for _, p := range streams {
		t.Run(p.spec, func(t *testing.T) {
			full := p.body("", "Some text first.", llmtest.Call{ID: "c1", Name: "read", Args: `{"path": "a.txt"}`})
			cut := full[:len(full)*2/3]
			s := llmtest.New(t, llmtest.Response{Body: cut, Chunk: 50, Cut: true})
			m, err := client(t, p.spec, baseFor(s, p.spec)).Stream(context.Background(), llm.Request{}, nil)
			if err == nil {
				t.Fatalf("no error for a cut stream; message %+v", m)
			}
			if len(m.ToolCalls()) != 0 || m.StopReason != "error" || m.ErrorMessage == "" {
				t.Errorf("cut stream message: calls %v, stop %q, error %q", m.ToolCalls(), m.StopReason, m.ErrorMessage)
			}
		})
	}
}

func TestStreamErrorEventMidStream(t *testing.T) {
	body := llmtest.Anthropic("", "partial")
	body = body[:strings.Index(body, "event: message_delta")] + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	s := llmtest.New(t, llmtest.Response{Body: body})
	m, err := client(t, "anthropic/x", s.URL).Stream(context.Background(), llm.Request{}, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Code != "overloaded_error" || m.Text() != "partial" {
		t.Fatalf("err %v, text %q", err, m.Text())
	}
}

func TestAbortWhileStreaming(t *testing.T) {
	body := llmtest.Anthropic("", "a long answer that never ends")
	s := llmtest.New(t, llmtest.Response{Body: body[:len(body)/2], Chunk: 10})
	ctx, cancel := context.WithCancel(context.Background())
	m, err := client(t, "anthropic/x", s.URL).Stream(ctx, llm.Request{}, func(e llm.Event) {
		if e.Type == llm.EventTextDelta {
			cancel()
		}
	})
	if err == nil || m.StopReason != "aborted" && m.StopReason != "error" {
		t.Fatalf("abort: err %v, stop %q", err, m.StopReason)
	}
}

func TestNewErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"claude":        "PROVIDER/MODEL",
		"nope/x":        "unknown provider \"nope\"",
		"anthropic/x":   "set ANTHROPIC_API_KEY",
		"google/gemini": "set GEMINI_API_KEY or GOOGLE_API_KEY",
	} {
		_, err := llm.New(spec, llm.Options{Getenv: func(string) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) = %v, want %q", spec, err, want)
		}
	}
	if _, err := llm.New("ollama/llama3.2", llm.Options{Getenv: func(string) string { return "" }}); err != nil {
		t.Errorf("ollama needs no key: %v", err)
	}
}

func TestOverloadEventBeforeContentIsRetried(t *testing.T) {
	overloaded := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	s := llmtest.New(t, llmtest.Response{Body: overloaded}, llmtest.Response{Body: llmtest.Anthropic("", "second time lucky")})
	m, err := client(t, "anthropic/x", s.URL).Stream(context.Background(), llm.Request{}, nil)
	if err != nil || m.Text() != "second time lucky" || len(s.Requests()) != 2 {
		t.Fatalf("text %q, err %v, %d requests", m.Text(), err, len(s.Requests()))
	}
	// After content arrived, the error ends the response (no duplicate text).
	body := llmtest.Anthropic("", "partial")
	body = body[:strings.Index(body, "event: message_delta")] + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	s = llmtest.New(t, llmtest.Response{Body: body}, llmtest.Response{Body: llmtest.Anthropic("", "again")})
	if _, err := client(t, "anthropic/x", s.URL).Stream(context.Background(), llm.Request{}, nil); err == nil || len(s.Requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(s.Requests()))
	}
}

func TestUsageCost(t *testing.T) {
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "hi")})
	c, err := llm.New("anthropic/x", llm.Options{BaseURL: s.URL, APIKey: "k", Price: &llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Stream(context.Background(), llm.Request{}, nil)
	// 120 input, 42 output, 30 cache read, 10 cache write tokens.
	want := (120*3 + 42*15 + 30*0.3 + 10*3.75) / 1e6
	if err != nil || m.Usage.Cost < want*0.999999 || m.Usage.Cost > want*1.000001 {
		t.Fatalf("cost %v, want %v (%v)", m.Usage.Cost, want, err)
	}
}

// TestWholeArguments: servers that send a call's arguments whole — in
// Anthropic's content_block_start, in Responses' arguments.done — are read.
func TestWholeArguments(t *testing.T) {
	anth := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{\"path\":\"a.txt\"}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	resp := "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"read\",\"arguments\":\"\"}}\n\n" +
		"event: response.function_call_arguments.done\ndata: {\"type\":\"response.function_call_arguments.done\",\"item_id\":\"fc_1\",\"output_index\":0,\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n"
	for spec, body := range map[string]string{"anthropic/x": anth, "openai-responses/x": resp} {
		s := llmtest.New(t, llmtest.Response{Body: body})
		m, err := client(t, spec, baseFor(s, spec)).Stream(context.Background(), llm.Request{}, nil)
		if err != nil || len(m.ToolCalls()) != 1 || compact(m.ToolCalls()[0].Arguments) != `{"path":"a.txt"}` {
			t.Errorf("%s: %+v, %v", spec, m.Content, err)
		}
	}
}

// TestChatCallsAllIndexZero: servers that number every call 0 and tell
// them apart by id.
func TestChatCallsAllIndexZero(t *testing.T) {
	chunk := func(d string) string {
		return `data: {"choices":[{"index":0,"delta":` + d + `,"finish_reason":null}]}` + "\n\n"
	}
	body := chunk(`{"tool_calls":[{"index":0,"id":"a1","function":{"name":"read","arguments":"{\"path\":"}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"b2","function":{"name":"ls","arguments":"{}"}}]}`) +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	s := llmtest.New(t, llmtest.Response{Body: body})
	m, err := client(t, "ollama/x", s.URL+"/v1").Stream(context.Background(), llm.Request{}, nil)
	calls := m.ToolCalls()
	if err != nil || len(calls) != 2 || calls[0].ID != "a1" || compact(calls[0].Arguments) != `{"path":"x"}` || calls[1].ID != "b2" || calls[1].Name != "ls" {
		t.Fatalf("%+v %v", calls, err)
	}
}

// TestAnthropicRewritesForeignIDs: ids Anthropic would refuse are rewritten
// the same way in the call and in its result.
func TestAnthropicRewritesForeignIDs(t *testing.T) {
	msgs := []llm.Message{
		llm.UserText("x"),
		{Role: llm.RoleAssistant, Provider: "openai", Content: []llm.Block{{Type: llm.BlockToolCall, ID: "call:1/a.b", Name: "read", Arguments: json.RawMessage(`{}`)}}},
		{Role: llm.RoleToolResult, ToolCallID: "call:1/a.b", Content: []llm.Block{{Type: llm.BlockText, Text: "ok"}}},
	}
	b := send(t, "anthropic/x", msgs)
	got := js(b["messages"])
	if !strings.Contains(got, `"id":"call_1_a_b"`) || !strings.Contains(got, `"tool_use_id":"call_1_a_b"`) {
		t.Errorf("ids: %s", got)
	}
}

// TestIdleStreamGivenUp: a server that stops sending mid-stream is given up
// after the idle timeout, with what arrived kept.
func TestIdleStreamGivenUp(t *testing.T) {
	body := llmtest.Anthropic("", "half an answer")
	s := llmtest.New(t, llmtest.Response{Body: body[:strings.Index(body, "event: message_delta")], Stall: true})
	c, err := llm.New("anthropic/x", llm.Options{BaseURL: s.URL, APIKey: "k", IdleTimeout: 2 * time.Second, Retry: fastRetry}) // long enough for the first bytes on a loaded machine
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Stream(context.Background(), llm.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "sent nothing for 2s") || m.Text() != "half an answer" || m.StopReason != "error" {
		t.Fatalf("err %v, text %q, stop %q", err, m.Text(), m.StopReason)
	}
}
