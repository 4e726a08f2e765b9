package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestReusedEncodingIsFresh: a client that copies the encoding of the
// messages its last request had (a conversation's growing transcript;
// Anthropic's last block a cache breakpoint that moves)
// sends, request after request, the bytes a new client sends for the same
// request: as the conversation grows, when an earlier message changes (as
// a compaction elides a result), with an image in a result, and when
// another conversation starts.
func TestReusedEncodingIsFresh(t *testing.T) {
	for _, spec := range []string{"openai/gpt-test", "deepseek/deepseek-chat", "anthropic/claude-test"} {
		var reqs []llm.Request
		msgs := []llm.Message{llm.UserText("read a.txt <twice>")}
		add := func(text string) {
			id := "call_" + string(rune('a'+len(msgs)))
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, Provider: "deepseek", Content: []llm.Block{{Type: llm.BlockThinking, Thinking: "hm"}, {Type: llm.BlockText, Text: "reading"}, {Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
				llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "read", Content: []llm.Block{{Type: llm.BlockText, Text: text}}})
			reqs = append(reqs, llm.Request{System: "be brief", Messages: msgs})
		}
		reqs = append(reqs, llm.Request{System: "be brief", Messages: msgs})
		add("alpha")
		add(strings.Repeat("beta & <gamma>\n", 300))
		// An earlier result elided, the transcript a new slice.
		msgs = append([]llm.Message(nil), msgs...)
		msgs[2].Content = []llm.Block{{Type: llm.BlockText, Text: "[elided]"}}
		reqs = append(reqs, llm.Request{System: "be brief", Messages: msgs})
		msgs[4].Content = append(msgs[4].Content, llm.Block{Type: llm.BlockImage, MIMEType: "image/png", Data: "iVBORw0KGgo="})
		add("delta")
		add("epsilon")
		reqs = append(reqs, llm.Request{System: "be brief", Messages: msgs[:1]}, llm.Request{System: "another", Messages: []llm.Message{llm.UserText("hello")}})

		answers := make([]llmtest.Response, len(reqs))
		for i := range answers {
			answers[i] = llmtest.Response{Body: llmtest.Chat("", "ok")}
			if strings.HasPrefix(spec, "anthropic/") {
				answers[i].Body = llmtest.Anthropic("", "ok")
			}
		}
		reused, fresh := llmtest.New(t, answers...), llmtest.New(t, answers...)
		c := client(t, spec, baseFor(reused, spec))
		for i, req := range reqs {
			if _, err := c.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := client(t, spec, baseFor(fresh, spec)).Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			got, want := reused.Requests()[i].Body, fresh.Requests()[i].Body
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: request %d differs from a new client's:\n%.2000s\n%.2000s", spec, i, got, want)
			}
		}
		// The image, or the note that stands for it where the model takes none.
		if !bytes.Contains(reused.Requests()[3].Body, []byte(`[elided]`)) || !bytes.Contains(reused.Requests()[4].Body, []byte(`image_url`)) && !bytes.Contains(reused.Requests()[4].Body, []byte(`image(s) omitted`)) && !bytes.Contains(reused.Requests()[4].Body, []byte(`"media_type":"image/png"`)) {
			t.Fatalf("%s: the changed messages were not sent:\n%.2000s", spec, reused.Requests()[4].Body)
		}
	}
}

// lateReader is a transport that answers at once and reads each request's
// body only later, as a transport may (RoundTrip may close the body after
// it returns).
type lateReader struct {
	mu     sync.Mutex
	bodies []io.ReadCloser
}

func (l *lateReader) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.bodies = append(l.bodies, r.Body)
	l.mu.Unlock()
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(llmtest.Chat("", "ok"))), Request: r}, nil
}

// TestRequestBodyKeptWhileRead: a request's body is not written over by
// the next request while the transport has not closed it.
func TestRequestBodyKeptWhileRead(t *testing.T) {
	tr := &lateReader{}
	c, err := llm.New("openai/gpt-test", llm.Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", HTTP: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second", "third"} {
		if _, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText(strings.Repeat(text, 100))}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, text := range []string{"first", "second", "third"} {
		b, err := io.ReadAll(tr.bodies[i])
		if err != nil {
			t.Fatal(err)
		}
		tr.bodies[i].Close()
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.Unmarshal(b, &req); err != nil || len(req.Messages) != 1 || req.Messages[0].Content != strings.Repeat(text, 100) {
			t.Fatalf("request %d's body, read after the next request: %v: %s", i, err, b)
		}
	}
}

// closingReader is a transport that closes each request's body at once
// and keeps it, as HTTP/2's may go on reading one it closed.
type closingReader struct{ lateReader }

func (c *closingReader) RoundTrip(r *http.Request) (*http.Response, error) {
	r.Body.Close()
	return c.lateReader.RoundTrip(r)
}

// TestClosedRequestBodyReadsNothing: a body read after the transport
// closed it reads nothing — not the next request, which may be written
// into the same buffer.
func TestClosedRequestBodyReadsNothing(t *testing.T) {
	tr := &closingReader{}
	c, err := llm.New("openai/gpt-test", llm.Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", HTTP: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if _, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText(strings.Repeat(text, 100))}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := io.ReadAll(tr.bodies[0]); err == nil || len(b) != 0 {
		t.Fatalf("the first body, read after it was closed and the next request sent: %v: %.80s", err, b)
	}
}
