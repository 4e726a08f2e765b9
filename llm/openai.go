package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// chatWire is OpenAI Chat Completions (and the servers that copy it):
// POST /chat/completions with stream: true and usage in the last chunk.
type chatWire struct{}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolResultText returns a tool result's text, and its images and audio
// (none when the model takes no images, none of the audio unless the wire
// takes audio: a note stands for what is left out).
func toolResultText(m Message, noImages, takesAudio bool) (string, []Block) {
	var texts []string
	var media []Block
	images, audio := 0, 0
	for _, b := range m.Content {
		switch {
		case b.Type == BlockImage && noImages:
			images++
		case b.Type == BlockAudio && !takesAudio:
			audio++
		case b.Type == BlockImage || b.Type == BlockAudio:
			media = append(media, b)
		default:
			texts = append(texts, b.Text)
		}
	}
	if images > 0 {
		texts = append(texts, fmt.Sprintf(noteImagesOmitted, images))
	}
	if audio > 0 {
		texts = append(texts, fmt.Sprintf(noteAudioOmitted, audio))
	}
	return strings.Join(texts, "\n"), media
}

func dataURL(b Block) string { return "data:" + b.MIMEType + ";base64," + b.Data }

// chatMessage is a Chat Completions message.
type chatMessage struct {
	Role string `json:"role"`
	// Content is a string or, with images, a list of parts.
	Content          any            `json:"content"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
}

// sameChatMessage says whether two messages encode alike (see
// encodedList): messages whose content is a list of parts (images) are
// never the same.
func sameChatMessage(a, b *chatMessage) bool {
	s, ok := a.Content.(string)
	t, ok2 := b.Content.(string)
	return ok && ok2 && s == t && a.Role == b.Role && a.ToolCallID == b.ToolCallID &&
		a.ReasoningContent == b.ReasoningContent && slices.Equal(a.ToolCalls, b.ToolCalls)
}

type chatTextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type chatImagePart struct {
	Type     string `json:"type"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// chatHead is a request's fields before its tools and messages.
type chatHead struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxCompletionTokens int    `json:"max_completion_tokens,omitempty"`
	MaxTokens           int    `json:"max_tokens,omitempty"`
	ReasoningEffort     string `json:"reasoning_effort,omitempty"`
	ParallelToolCalls   *bool  `json:"parallel_tool_calls,omitempty"`
}

func (chatWire) request(c *client, req Request) (string, http.Header, []byte, error) {
	ids := c.p.idMap()
	noImages := c.p.Quirks.NoImages
	var msgs []chatMessage
	if req.System != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: req.System})
	}
	userParts := func(blocks []Block) any {
		onlyText := true
		for _, b := range blocks {
			if b.Type == BlockImage && !noImages {
				onlyText = false
			}
		}
		if onlyText {
			if len(blocks) == 1 && blocks[0].Type != BlockImage {
				return blocks[0].Text
			}
			s := make([]string, len(blocks))
			for i, b := range blocks {
				s[i] = b.Text
				if b.Type == BlockImage {
					s[i] = fmt.Sprintf(noteImagesOmitted, 1)
				}
			}
			return strings.Join(s, "\n")
		}
		parts := make([]any, len(blocks))
		for i, b := range blocks {
			if b.Type == BlockImage {
				p := chatImagePart{Type: "image_url"}
				p.ImageURL.URL = dataURL(b)
				parts[i] = p
			} else {
				parts[i] = chatTextPart{Type: "text", Text: b.Text}
			}
		}
		return parts
	}
	// Images from tool results go in a user message after the results:
	// Chat Completions takes only text in a tool message.
	var pending []Block
	flush := func() {
		if len(pending) > 0 {
			msgs = append(msgs, chatMessage{Role: "user", Content: userParts(append([]Block{{Type: BlockText, Text: "The images the tool results above returned:"}}, pending...))})
			pending = nil
		}
	}
	for _, m := range req.Messages {
		if m.Role != RoleToolResult {
			flush()
		}
		switch m.Role {
		case RoleUser:
			msgs = append(msgs, chatMessage{Role: "user", Content: userParts(m.Content)})
		case RoleAssistant:
			out := chatMessage{Role: "assistant"}
			var text, reasoning string
			for _, b := range m.Content {
				switch b.Type {
				case BlockText:
					text += b.Text
				case BlockThinking:
					reasoning += b.Thinking
				case BlockToolCall:
					tc := chatToolCall{ID: wireID(ids, b.ID), Type: "function"}
					tc.Function.Name = b.Name
					tc.Function.Arguments = string(b.Arguments)
					if b.InvalidArguments != "" {
						tc.Function.Arguments = b.InvalidArguments
					}
					out.ToolCalls = append(out.ToolCalls, tc)
				}
			}
			if text == "" && len(out.ToolCalls) == 0 {
				continue
			}
			out.Content = text
			if reasoning != "" && m.Provider == c.p.Name && c.p.Name == "deepseek" {
				out.ReasoningContent = reasoning
			}
			msgs = append(msgs, out)
		case RoleToolResult:
			text, images := toolResultText(m, noImages, false)
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: wireID(ids, m.ToolCallID), Content: text})
			pending = append(pending, images...)
		}
	}
	flush()
	head := chatHead{Model: req.Model, Stream: true, ReasoningEffort: openAIEffort(c.p.Name, req.Model, req.Thinking)}
	head.StreamOptions.IncludeUsage = true
	var tools []byte
	if hasTools(req.Tools) {
		tools = req.Tools
		if c.p.Quirks.NoParallelCalls {
			head.ParallelToolCalls = new(bool)
		}
	}
	if c.p.Name == "openai" {
		head.MaxCompletionTokens = req.MaxTokens
	} else {
		head.MaxTokens = req.MaxTokens
	}
	body, err := object(c.buffer(), head, field{name: "tools", value: tools}, field{name: "messages", write: func(b *bytes.Buffer) error {
		return c.chatMsgs.write(b, msgs, sameChatMessage)
	}})
	if err != nil {
		return "", nil, nil, err
	}
	h := http.Header{}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
	return "/chat/completions", h, body, nil
}

type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Type    string `json:"type"`
	} `json:"error"`
}

func (chatWire) read(s *sseReader, a *assembler) (string, error) {
	var stop string
	callKeys := map[int]string{}
	for {
		name, data, err := s.next()
		if err != nil {
			return stop, err
		}
		if string(data) == "[DONE]" {
			a.done = true
			return stop, nil
		}
		var ch chatChunk
		if err := decode(name, data, &ch); err != nil {
			return stop, err
		}
		if ch.Error != nil {
			return stop, &APIError{Provider: a.msg.Provider, Code: codeString(ch.Error.Code, ch.Error.Type), Message: ch.Error.Message}
		}
		if u := ch.Usage; u != nil {
			us := Usage{Input: u.PromptTokens, Output: u.CompletionTokens, CacheRead: u.PromptCacheHitTokens}
			if u.PromptTokensDetails != nil {
				us.CacheRead = u.PromptTokensDetails.CachedTokens
			}
			us.Input -= us.CacheRead
			a.setUsage(us)
		}
		for _, choice := range ch.Choices {
			d := choice.Delta
			if d.ReasoningContent != nil {
				a.thinking("thinking", *d.ReasoningContent)
			}
			if d.Reasoning != nil {
				a.thinking("thinking", *d.Reasoning)
			}
			if d.Content != nil {
				a.text("text", *d.Content)
			}
			for j, tc := range d.ToolCalls {
				idx := j
				if tc.Index != nil {
					idx = *tc.Index
				}
				// Some servers number every call 0 and tell them apart by id.
				key, ok := callKeys[idx]
				if !ok || tc.ID != "" && a.msg.Content[a.keys[key]].ID != "" && a.msg.Content[a.keys[key]].ID != tc.ID {
					key = fmt.Sprintf("call%d.%d", idx, len(a.msg.Content))
					callKeys[idx] = key
					a.callStart(key, tc.ID, tc.Function.Name)
				} else if tc.Function.Name != "" {
					a.msg.Content[a.keys[key]].Name += tc.Function.Name
				}
				a.callDelta(key, tc.Function.Arguments)
			}
			if choice.FinishReason != nil && *choice.FinishReason != "" {
				stop = chatStop(*choice.FinishReason)
			}
		}
	}
}

func chatStop(r string) string {
	switch r {
	case "length":
		return "length"
	case "tool_calls", "function_call":
		return "toolUse"
	}
	return "stop"
}

func codeString(code any, typ string) string {
	switch c := code.(type) {
	case string:
		return c
	case float64:
		return strconv.Itoa(int(c))
	}
	return typ
}

// apiError reads {"error":{"message","type","code"}} (OpenAI and most
// compatible servers), {"error":"text"} (some local servers) or
// {"message":…} (Mistral).
func (chatWire) apiError(body []byte) (string, string) {
	return openAIError(body)
}

func openAIError(body []byte) (string, string) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
		return codeString(obj.Code, obj.Type), obj.Message
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil && s != "" {
		return "", s
	}
	return "", cmpOr(e.Message, e.Detail)
}
