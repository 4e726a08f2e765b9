package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// replay is the model server both loops talk to: every request is
// answered at once with a call of read (file.txt) until the conversation
// holds `turns` tool results, then with a final text. It bills the
// request's tokens as a provider with prompt caching would (tokens are
// estimated as bytes / 4). Anthropic: the longest prefix, up to the
// request's last cache_control breakpoint, that ended at a breakpoint of
// an earlier request is read from the cache (the markers themselves are
// not part of what is compared, as they move from turn to turn), and the
// rest up to that breakpoint is written. OpenAI: the longest prefix shared
// with the previous request is read, in 128-token steps from 1,024 tokens.
type replay struct {
	turns int
	busy  atomic.Int64 // nanoseconds spent in handlers
	n     atomic.Int64 // requests answered

	mu       sync.Mutex
	written  map[[32]byte]bool // Anthropic: prefixes written to the cache
	lengths  map[int]bool      // their lengths
	previous []byte            // OpenAI: the previous request
}

func serve(turns int) {
	s := &replay{turns: turns, written: map[[32]byte]bool{}, lengths: map[int]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.timed(s.chat))
	mux.HandleFunc("POST /v1/messages", s.timed(s.anthropic))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d %d\n", s.busy.Load(), s.n.Load())
	})
	fmt.Println("http://" + ln.Addr().String())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }() // ends with its parent
	check(http.Serve(ln, mux))
}

func (s *replay) timed(h func(w http.ResponseWriter, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		h(w, body)
		s.busy.Add(int64(time.Since(start)))
		s.n.Add(1)
	}
}

// results counts the tool results in a request.
func results(body []byte, key string) int { return bytes.Count(body, []byte(key)) }

func sse(w io.Writer, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

func (s *replay) chat(w http.ResponseWriter, body []byte) {
	n := results(body, `"tool_call_id"`)
	s.mu.Lock()
	shared := commonPrefix(s.previous, body)
	s.previous = body
	s.mu.Unlock()
	prompt := len(body) / 4
	cached := 0
	if shared/4 >= 1024 {
		cached = shared / 4 / 128 * 128
	}
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-bench",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if n < s.turns {
		id := fmt.Sprintf("call_%d", n+1)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]string{"name": "read", "arguments": ""}}}}, nil)
		for _, p := range []string{`{"pa`, `th": "fi`, `le.txt"}`} {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]string{"arguments": p}}}}, nil)
		}
		chunk(map[string]any{}, "tool_calls")
	} else {
		for _, p := range []string{"The file ", "holds 64 ", "lines of x."} {
			chunk(map[string]any{"content": p}, nil)
		}
		chunk(map[string]any{}, "stop")
	}
	sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20,
			"prompt_tokens_details": map[string]int{"cached_tokens": cached}}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *replay) anthropic(w http.ResponseWriter, body []byte) {
	n := results(body, `"tool_use_id"`)
	// The breakpoints' prefixes end with the block that carries them.
	mark := []byte(`,"cache_control":{"type":"ephemeral"}`)
	canon := bytes.ReplaceAll(body, mark, nil)
	var ends []int
	for off, k := 0, 0; ; k++ {
		i := bytes.Index(body[off:], mark)
		if i < 0 {
			break
		}
		ends = append(ends, off+i-k*len(mark))
		off += i + len(mark)
	}
	var read, write int
	s.mu.Lock()
	if len(ends) > 0 {
		// One pass of the hash over the request, its state read at every
		// length an earlier breakpoint had and at this request's own.
		last := ends[len(ends)-1]
		var at []int
		for l := range s.lengths {
			if l <= last {
				at = append(at, l)
			}
		}
		at = append(at, ends...)
		slices.Sort(at)
		h := sha256.New()
		pos := 0
		var k [32]byte
		for _, l := range slices.Compact(at) {
			h.Write(canon[pos:l])
			pos = l
			copy(k[:], h.Sum(nil))
			if s.written[k] {
				read = l
			}
			if slices.Contains(ends, l) && !s.written[k] {
				s.written[k] = true
				s.lengths[l] = true
			}
		}
		write = last - read
	}
	s.mu.Unlock()
	read, write = read/4, write/4
	input := len(canon)/4 - read - write
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-bench", "content": []any{},
		"usage": map[string]int{"input_tokens": input, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 1}}})
	if n < s.turns {
		id := fmt.Sprintf("toolu_%02d", n+1)
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": id, "name": "read", "input": map[string]any{}}})
		for _, p := range []string{`{"pa`, `th": "fi`, `le.txt"}`} {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "input_json_delta", "partial_json": p}})
		}
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "text", "text": ""}})
		for _, p := range []string{"The file ", "holds 64 ", "lines of x."} {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": p}})
		}
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	stop := "end_turn"
	if n < s.turns {
		stop = "tool_use"
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]int{"output_tokens": 20}})
	sse(w, "message_stop", map[string]string{"type": "message_stop"})
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// stats reads the server's busy time and request count.
func stats(url string) (time.Duration, int) {
	resp, err := http.Get(url + "/stats")
	check(err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ns, n int64
	_, err = fmt.Sscan(strings.TrimSpace(string(b)), &ns, &n)
	check(err)
	return time.Duration(ns), int(n)
}
