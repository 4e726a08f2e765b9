// Package llmtest replays model providers' streams from a local HTTP
// server, for tests of code that talks to models without a network: each
// request gets the next scripted response, written in the exact shape the
// provider sends (SSE event names, usage in the last chunk, arguments in
// fragments), in writes of a chosen size so chunk boundaries fall inside
// JSON strings.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Response is one scripted response.
type Response struct {
	// Status is the HTTP status (default 200).
	Status int
	// Header is added to the response.
	Header map[string]string
	// Body is the response body: an SSE stream, or an error's JSON.
	Body string
	// Chunk, when positive, writes the body in pieces of this many bytes,
	// flushing after each.
	Chunk int
	// Cut drops the connection after the body is written, as a server that
	// died mid-stream does.
	Cut bool
	// Stall keeps the connection open without writing after the body,
	// until the client gives up, as a server that hangs does.
	Stall bool
	// Check, when set, inspects the request body and may answer instead
	// (a non-nil response replaces this one): a server that rejects what
	// it cannot take.
	Check func(body []byte) *Response
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string // with the query
	Header http.Header
	Body   []byte
}

// JSON decodes the request body.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, r.Body)
	}
	return m
}

// Server is a replay server on 127.0.0.1.
type Server struct {
	*httptest.Server
	mu        sync.Mutex
	responses []Response
	routes    []Route
	requests  []Request
}

// Route scripts the responses to the requests whose body contains Match,
// for several agents talking to one server at once, in an order no test
// can know: each route answers its own requests in order.
type Route struct {
	Match     string
	Responses []Response
}

// NewRouted starts a server that answers each request from the first
// route that matches it and has responses left; a request no route
// answers gets HTTP 500. It is closed when the test ends.
func NewRouted(t testing.TB, routes ...Route) *Server {
	s := &Server{routes: routes}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// next takes the response to a request with body; s.mu is held.
func (s *Server) next(body []byte) (Response, bool) {
	if s.routes == nil {
		if len(s.responses) == 0 {
			return Response{}, false
		}
		resp := s.responses[0]
		s.responses = s.responses[1:]
		return resp, true
	}
	for i := range s.routes {
		r := &s.routes[i]
		if len(r.Responses) > 0 && strings.Contains(string(body), r.Match) {
			resp := r.Responses[0]
			r.Responses = r.Responses[1:]
			return resp, true
		}
	}
	return Response{}, false
}

// New starts a server that answers requests with responses, in order; a
// request beyond them gets HTTP 500. It is closed when the test ends.
func New(t testing.TB, responses ...Response) *Server {
	s := Start(responses...)
	t.Cleanup(s.Close)
	return s
}

// Start is New for code outside a test (examples, benchmarks of a
// program): the caller closes the server.
func Start(responses ...Response) *Server {
	s := &Server{responses: responses}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	resp, ok := s.next(body)
	s.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":{"message":"the replay server has no more scripted responses"}}`, http.StatusInternalServerError)
		return
	}
	if resp.Check != nil {
		if alt := resp.Check(body); alt != nil {
			resp = *alt
		}
	}
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		if resp.Status == 0 || resp.Status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	w.WriteHeader(max(resp.Status, http.StatusOK))
	f, _ := w.(http.Flusher)
	b := resp.Body
	n := resp.Chunk
	if n <= 0 {
		n = len(b)
	}
	for len(b) > 0 {
		k := min(n, len(b))
		_, _ = io.WriteString(w, b[:k])
		b = b[k:]
		if f != nil {
			f.Flush()
		}
	}
	if resp.Cut {
		panic(http.ErrAbortHandler)
	}
	if resp.Stall {
		<-r.Context().Done()
	}
}

// Call is a tool call in a scripted stream.
type Call struct {
	ID   string
	Name string
	// Args is the arguments' text, sent in fragments of Piece bytes
	// (default 3); it may be broken JSON.
	Args  string
	Piece int
	// Signature is Gemini's thoughtSignature for the call's part.
	Signature string
}

func (c Call) pieces() []string {
	n := c.Piece
	if n <= 0 {
		n = 3
	}
	var out []string
	for s := c.Args; len(s) > 0; {
		k := min(n, len(s))
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// interleave returns the calls' fragments as (call, fragment) pairs, the
// calls' fragments alternating, as parallel calls arrive.
func interleave(calls []Call) [][2]int {
	var out [][2]int
	for round := 0; ; round++ {
		any := false
		for i, c := range calls {
			if round < len(c.pieces()) {
				out = append(out, [2]int{i, round})
				any = true
			}
		}
		if !any {
			return out
		}
	}
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func event(name string, data any) string {
	if name == "" {
		return "data: " + js(data) + "\n\n"
	}
	return "event: " + name + "\ndata: " + js(data) + "\n\n"
}

// textPieces splits text into pieces of 4 bytes.
func textPieces(text string) []string {
	var out []string
	for len(text) > 0 {
		k := min(4, len(text))
		out = append(out, text[:k])
		text = text[k:]
	}
	return out
}

// Anthropic returns a Messages API stream: thinking (when given), text,
// then the calls, each argument fragment an input_json_delta, usage in
// message_start and message_delta.
func Anthropic(thinking, text string, calls ...Call) string {
	var b strings.Builder
	b.WriteString(event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
		"usage": map[string]int{"input_tokens": 120, "cache_read_input_tokens": 30, "cache_creation_input_tokens": 10, "output_tokens": 1}}}))
	b.WriteString(event("ping", map[string]string{"type": "ping"}))
	i := 0
	if thinking != "" {
		b.WriteString(event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]string{"type": "thinking", "thinking": ""}}))
		for _, p := range textPieces(thinking) {
			b.WriteString(event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "thinking_delta", "thinking": p}}))
		}
		b.WriteString(event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "signature_delta", "signature": "sig-" + fmt.Sprint(i)}}))
		b.WriteString(event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
		i++
	}
	if text != "" {
		b.WriteString(event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]string{"type": "text", "text": ""}}))
		for _, p := range textPieces(text) {
			b.WriteString(event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "text_delta", "text": p}}))
		}
		b.WriteString(event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
		i++
	}
	for _, c := range calls {
		b.WriteString(event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}))
		for _, p := range c.pieces() {
			b.WriteString(event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "input_json_delta", "partial_json": p}}))
		}
		b.WriteString(event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
		i++
	}
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	b.WriteString(event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 42}}))
	b.WriteString(event("message_stop", map[string]string{"type": "message_stop"}))
	return b.String()
}

// Chat returns a Chat Completions stream: reasoning_content (when given),
// content, then the calls as tool_calls[index] deltas (the first with id,
// name and empty arguments, the fragments of parallel calls interleaved),
// the finish reason, and usage in a last chunk without choices.
func Chat(thinking, text string, calls ...Call) string {
	var b strings.Builder
	chunk := func(delta map[string]any, finish any) {
		b.WriteString(event("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}))
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range textPieces(thinking) {
		chunk(map[string]any{"reasoning_content": p}, nil)
	}
	for _, p := range textPieces(text) {
		chunk(map[string]any{"content": p}, nil)
	}
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": ""}}}}, nil)
	}
	for _, f := range interleave(calls) {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": f[0], "function": map[string]string{"arguments": calls[f[0]].pieces()[f[1]]}}}}, nil)
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	b.WriteString(event("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "prompt_tokens_details": map[string]int{"cached_tokens": 40}}}))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// Responses returns a Responses API stream: a reasoning summary (when
// given), the calls (output_item.added, interleaved
// function_call_arguments.delta, output_item.done), text, and
// response.completed with usage.
func Responses(thinking, text string, calls ...Call) string {
	var b strings.Builder
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b.WriteString(event(typ, fields))
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": "resp_1", "status": "in_progress", "output": []any{}}})
	idx := 0
	if thinking != "" {
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}}})
		for _, p := range textPieces(thinking) {
			ev("response.reasoning_summary_text.delta", map[string]any{"item_id": "rs_1", "output_index": idx, "summary_index": 0, "delta": p})
		}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": map[string]any{"type": "reasoning", "id": "rs_1"}})
		idx++
	}
	base := idx
	for i, c := range calls {
		ev("response.output_item.added", map[string]any{"output_index": base + i, "item": map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": "", "status": "in_progress"}})
	}
	for _, f := range interleave(calls) {
		c := calls[f[0]]
		ev("response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + c.ID, "output_index": base + f[0], "delta": c.pieces()[f[1]]})
	}
	for i, c := range calls {
		ev("response.function_call_arguments.done", map[string]any{"item_id": "fc_" + c.ID, "output_index": base + i, "arguments": c.Args})
		ev("response.output_item.done", map[string]any{"output_index": base + i, "item": map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args, "status": "completed"}})
	}
	idx += len(calls)
	if text != "" {
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "content": []any{}}})
		for _, p := range textPieces(text) {
			ev("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": idx, "content_index": 0, "delta": p})
		}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": map[string]any{"type": "message", "id": "msg_1"}})
	}
	ev("response.completed", map[string]any{"response": map[string]any{"id": "resp_1", "status": "completed",
		"usage": map[string]any{"input_tokens": 90, "output_tokens": 30, "input_tokens_details": map[string]int{"cached_tokens": 10}}}})
	return b.String()
}

// Gemini returns a streamGenerateContent?alt=sse stream: a thought (when
// given), the calls as whole functionCall parts (with their
// thoughtSignature) in one chunk, the text over several chunks, and the
// finish reason with usageMetadata in the last.
func Gemini(thinking, text string, calls ...Call) string {
	var b strings.Builder
	chunk := func(parts []map[string]any, finish string) {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		out := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-test"}
		if finish != "" {
			cand["finishReason"] = finish
			out["usageMetadata"] = map[string]int{"promptTokenCount": 80, "candidatesTokenCount": 15, "thoughtsTokenCount": 5, "totalTokenCount": 100}
		}
		b.WriteString(event("", out))
	}
	if thinking != "" {
		chunk([]map[string]any{{"text": thinking, "thought": true}}, "")
	}
	if len(calls) > 0 {
		var parts []map[string]any
		for _, c := range calls {
			var args any = json.RawMessage(c.Args)
			if !json.Valid([]byte(c.Args)) {
				args = c.Args
			}
			p := map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}}
			if c.Signature != "" {
				p["thoughtSignature"] = c.Signature
			}
			parts = append(parts, p)
		}
		if text == "" {
			chunk(parts, "STOP")
			return b.String()
		}
		chunk(parts, "")
	}
	pieces := textPieces(text)
	for i, p := range pieces {
		finish := ""
		if i == len(pieces)-1 {
			finish = "STOP"
		}
		chunk([]map[string]any{{"text": p}}, finish)
	}
	return b.String()
}
