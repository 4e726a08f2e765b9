package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// anthropicWire is the Messages API: POST /v1/messages with stream: true.
type anthropicWire struct{}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type anthropicImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func anthropicImage(b Block) map[string]any {
	return map[string]any{"type": "image", "source": anthropicImageSource{Type: "base64", MediaType: b.MIMEType, Data: b.Data}}
}

func (anthropicWire) request(c *client, req Request) (string, http.Header, any, error) {
	ids := c.p.idMap()
	var msgs []anthropicMessage
	add := func(role string, blocks ...any) {
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
			return
		}
		msgs = append(msgs, anthropicMessage{Role: role, Content: blocks})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			for _, b := range m.Content {
				if b.Type == BlockImage {
					add("user", anthropicImage(b))
				} else if b.Text != "" {
					add("user", map[string]any{"type": "text", "text": b.Text})
				}
			}
		case RoleAssistant:
			var blocks []any
			for _, b := range m.Content {
				switch b.Type {
				case BlockText:
					blocks = append(blocks, map[string]any{"type": "text", "text": b.Text})
				case BlockThinking:
					if b.Signature == "" || m.Provider != c.p.Name {
						// Without its signature Anthropic refuses a thinking
						// block: send the thought as text.
						if b.Thinking != "" {
							blocks = append(blocks, map[string]any{"type": "text", "text": b.Thinking})
						}
						continue
					}
					blocks = append(blocks, map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature})
				case BlockToolCall:
					blocks = append(blocks, map[string]any{"type": "tool_use", "id": wireID(ids, b.ID), "name": wireName(req, b.Name), "input": b.Arguments})
				}
			}
			if len(blocks) > 0 {
				add("assistant", blocks...)
			}
		case RoleToolResult:
			var content []any
			for _, b := range m.Content {
				switch b.Type {
				case BlockImage:
					content = append(content, anthropicImage(b))
				case BlockAudio: // Anthropic takes no audio
					content = append(content, map[string]any{"type": "text", "text": fmt.Sprintf(noteAudioOmitted, 1)})
				default:
					content = append(content, map[string]any{"type": "text", "text": b.Text})
				}
			}
			r := map[string]any{"type": "tool_result", "tool_use_id": wireID(ids, m.ToolCallID), "content": content}
			if m.IsError {
				r["is_error"] = true
			}
			add("user", r)
		}
	}
	thinking, maxTokens := anthropicThinking(req.Thinking, req.MaxTokens)
	body := map[string]any{"model": req.Model, "max_tokens": maxTokens, "messages": msgs, "stream": true}
	if thinking != nil {
		body["thinking"] = thinking
	}
	if req.System != "" {
		body["system"] = req.System
	}
	if len(req.Tools) > 0 && string(req.Tools) != "[]" {
		body["tools"] = renameTools(req.Tools, req.wireNames)
	}
	h := http.Header{}
	h.Set("anthropic-version", "2023-06-01")
	switch {
	case c.oauth:
		// As Claude Code sends it: the token as a bearer, its betas and
		// identity, its system prompt first.
		if c.key != "" {
			h.Set("Authorization", "Bearer "+c.key)
		}
		h.Set("anthropic-beta", claudeCodeBetas)
		h.Set("User-Agent", "claude-cli/"+claudeCodeVersion+" (external, cli)")
		h.Set("x-app", "cli")
		system := []any{map[string]any{"type": "text", "text": claudeCodeIdentity}}
		if req.System != "" {
			system = append(system, map[string]any{"type": "text", "text": req.System})
		}
		body["system"] = system
	case c.key != "":
		h.Set("x-api-key", c.key)
	}
	return "/v1/messages", h, body, nil
}

// wireName is the name a tool goes out as in this request.
func wireName(req Request, name string) string {
	if w, ok := req.wireNames[name]; ok {
		return w
	}
	return name
}

type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		Input     json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (anthropicWire) read(s *sseReader, a *assembler) (string, error) {
	var stop string
	var usage Usage
	for {
		name, data, err := s.next()
		if err != nil {
			return stop, err
		}
		var e anthropicEvent
		if err := decode(name, data, &e); err != nil {
			return stop, err
		}
		key := strconv.Itoa(e.Index)
		switch e.Type {
		case "message_start":
			u := e.Message.Usage
			usage = Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
			a.setUsage(usage)
		case "content_block_start":
			cb := e.ContentBlock
			switch cb.Type {
			case "text":
				a.block(key, BlockText)
				a.text(key, cb.Text)
			case "thinking":
				a.block(key, BlockThinking)
				a.thinking(key, cb.Thinking)
				a.signature(key, cb.Signature)
			case "tool_use", "server_tool_use":
				a.callStart(key, cb.ID, cb.Name)
				// Servers that send the input whole, in the start.
				if in := string(bytes.TrimSpace(cb.Input)); in != "" && in != "{}" && in != "null" {
					a.callDelta(key, in)
				}
			}
		case "content_block_delta":
			switch e.Delta.Type {
			case "text_delta":
				a.text(key, e.Delta.Text)
			case "thinking_delta":
				a.thinking(key, e.Delta.Thinking)
			case "signature_delta":
				a.signature(key, e.Delta.Signature)
			case "input_json_delta":
				a.callDelta(key, e.Delta.PartialJSON)
			}
		case "message_delta":
			if e.Delta.StopReason != "" {
				stop = anthropicStop(e.Delta.StopReason)
			}
			if e.Usage != nil {
				usage.Output = e.Usage.OutputTokens
				if e.Usage.InputTokens > 0 {
					usage.Input = e.Usage.InputTokens
				}
				a.setUsage(usage)
			}
		case "message_stop":
			a.done = true
			return stop, nil
		case "error":
			return stop, &APIError{Provider: a.msg.Provider, Code: e.Error.Type, Message: e.Error.Message}
		}
	}
}

func anthropicStop(r string) string {
	switch r {
	case "max_tokens":
		return "length"
	case "tool_use":
		return "toolUse"
	}
	return "stop"
}

func (anthropicWire) apiError(body []byte) (string, string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	return e.Error.Type, e.Error.Message
}
