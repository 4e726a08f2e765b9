package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
)

// anthropicWire is the Messages API: POST /v1/messages with stream: true.
type anthropicWire struct{}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

// sameAnthropicMessage says whether two messages encode alike (see
// encodedList), their blocks compared field by field.
func sameAnthropicMessage(a, b *anthropicMessage) bool { return reflect.DeepEqual(a, b) }

// The content blocks of a request.
type (
	anthropicText struct {
		Type string `json:"type"`
		Text string `json:"text"`
		// CacheControl marks a prompt-cache breakpoint.
		CacheControl *cacheControl `json:"cache_control,omitempty"`
	}
	anthropicThinkingBlock struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	anthropicToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	anthropicToolResult struct {
		Type         string        `json:"type"`
		ToolUseID    string        `json:"tool_use_id"`
		Content      []any         `json:"content"`
		IsError      bool          `json:"is_error,omitempty"`
		CacheControl *cacheControl `json:"cache_control,omitempty"`
	}
	anthropicImageBlock struct {
		Type   string               `json:"type"`
		Source anthropicImageSource `json:"source"`
	}
)

type anthropicImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// cacheControl is an Anthropic prompt-cache breakpoint: the prefix up to
// and including its block is cached (for five minutes, renewed by use).
type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is the breakpoint the requests use.
var ephemeral = &cacheControl{Type: "ephemeral"}

// breakpoint is the text that marks the block it ends as a breakpoint.
const breakpoint = `,"cache_control":{"type":"ephemeral"}`

// systemBreakpointBytes is the length from which a system prompt is a
// prompt-cache breakpoint of its own (and goes as a text block rather than
// a string): about 1,024 tokens, the shortest prefix Anthropic caches.
// Anthropic takes at most four breakpoints; the last tool and the last
// message are always two, and the message's covers a shorter system prompt
// with the rest of the conversation.
const systemBreakpointBytes = 4096

func anthropicImage(b Block) anthropicImageBlock {
	return anthropicImageBlock{Type: "image", Source: anthropicImageSource{Type: "base64", MediaType: b.MIMEType, Data: b.Data}}
}

// anthropicHead is a request's fields before its tools, system prompt and
// messages.
type anthropicHead struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Thinking  any    `json:"thinking,omitempty"`
}

// anthropicTools returns a tool list as it goes to Anthropic: renamed for
// an OAuth session, its last tool a prompt-cache breakpoint.
func (c *client) anthropicTools(tools []byte) wireList {
	var l wireList
	if c.oauth {
		l.names = wireNames(tools)
		l.back = invert(l.names)
		tools = renameTools(tools, l.names)
	}
	l.out = tools
	if t := bytes.TrimSpace(tools); bytes.HasSuffix(t, []byte("}]")) {
		out := make([]byte, 0, len(t)+len(breakpoint))
		out = append(out, t[:len(t)-2]...)
		out = append(out, breakpoint...)
		l.out = append(out, "}]"...)
	}
	return l
}

func (anthropicWire) request(c *client, req Request) (string, http.Header, []byte, error) {
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
					add("user", &anthropicText{Type: "text", Text: b.Text})
				}
			}
		case RoleAssistant:
			var blocks []any
			for _, b := range m.Content {
				switch b.Type {
				case BlockText:
					blocks = append(blocks, &anthropicText{Type: "text", Text: b.Text})
				case BlockThinking:
					if b.Signature == "" || m.Provider != c.p.Name {
						// Without its signature Anthropic refuses a thinking
						// block: send the thought as text.
						if b.Thinking != "" {
							blocks = append(blocks, &anthropicText{Type: "text", Text: b.Thinking})
						}
						continue
					}
					blocks = append(blocks, anthropicThinkingBlock{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
				case BlockToolCall:
					blocks = append(blocks, anthropicToolUse{Type: "tool_use", ID: wireID(ids, b.ID), Name: wireName(req, b.Name), Input: b.Arguments})
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
					content = append(content, anthropicText{Type: "text", Text: fmt.Sprintf(noteAudioOmitted, 1)})
				default:
					content = append(content, anthropicText{Type: "text", Text: b.Text})
				}
			}
			add("user", &anthropicToolResult{Type: "tool_result", ToolUseID: wireID(ids, m.ToolCallID), Content: content, IsError: m.IsError})
		}
	}
	// The conversation so far is a prompt-cache breakpoint: the next turn
	// reads it from the cache.
	if n := len(msgs); n > 0 {
		switch b := msgs[n-1].Content[len(msgs[n-1].Content)-1].(type) {
		case *anthropicText:
			b.CacheControl = ephemeral
		case *anthropicToolResult:
			b.CacheControl = ephemeral
		}
	}
	thinking, maxTokens := anthropicThinking(req.Thinking, req.MaxTokens)
	head := anthropicHead{Model: req.Model, MaxTokens: maxTokens, Stream: true}
	if thinking != nil {
		head.Thinking = thinking
	}
	var system any
	switch {
	case c.oauth:
		// As Claude Code sends it: its identity first.
		blocks := []anthropicText{{Type: "text", Text: claudeCodeIdentity}}
		if req.System != "" {
			blocks = append(blocks, anthropicText{Type: "text", Text: req.System})
		}
		blocks[len(blocks)-1].CacheControl = ephemeral
		system = blocks
	case len(req.System) >= systemBreakpointBytes:
		system = []anthropicText{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	case req.System != "":
		system = req.System
	}
	var tools []byte
	if hasTools(req.Tools) {
		tools = c.tools.get(req.Tools, c.anthropicTools).out
	}
	body, err := object(c.buffer(), head, field{name: "tools", value: tools}, field{name: "system", v: system}, field{name: "messages", write: func(b *bytes.Buffer) error {
		return c.anthropicMsgs.write(b, msgs, sameAnthropicMessage)
	}})
	if err != nil {
		return "", nil, nil, err
	}
	h := http.Header{}
	h.Set("anthropic-version", "2023-06-01")
	switch {
	case c.oauth:
		// As Claude Code sends it: the token as a bearer, its betas and
		// identity.
		if c.key != "" {
			h.Set("Authorization", "Bearer "+c.key)
		}
		h.Set("anthropic-beta", claudeCodeBetas)
		h.Set("User-Agent", "claude-cli/"+claudeCodeVersion+" (external, cli)")
		h.Set("x-app", "cli")
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
				// The final counts, where the server sends them here too.
				if e.Usage.InputTokens > 0 {
					usage.Input = e.Usage.InputTokens
				}
				if e.Usage.CacheReadInputTokens > 0 {
					usage.CacheRead = e.Usage.CacheReadInputTokens
				}
				if e.Usage.CacheCreationInputTokens > 0 {
					usage.CacheWrite = e.Usage.CacheCreationInputTokens
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
