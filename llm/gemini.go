package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/toolbelt/toolbelt/internal/randid"
)

// geminiWire is the Gemini API: POST
// /v1beta/models/MODEL:streamGenerateContent?alt=sse. Function calls come
// whole, one per part, usually without an id (one is made up; Gemini
// matches responses by name and order); a part's thoughtSignature goes
// back unchanged on the same part.
type geminiWire struct{}

type geminiPart struct {
	Text             string          `json:"text,omitempty"`
	Thought          bool            `json:"thought,omitempty"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
	InlineData       *geminiBlob     `json:"inlineData,omitempty"`
	FunctionCall     *geminiCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiResponse `json:"functionResponse,omitempty"`
}

type geminiBlob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

type geminiCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// geminiIDPrefix marks the ids made up for Gemini's calls, which are not
// sent back.
const geminiIDPrefix = "gemini_call_"

func (geminiWire) request(c *client, req Request) (string, http.Header, []byte, error) {
	var contents []geminiContent
	add := func(role string, parts ...geminiPart) {
		if len(parts) == 0 {
			return
		}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, geminiContent{Role: role, Parts: parts})
	}
	// Gemini answers a call by its name: the result carries the name the
	// model wrote.
	names := map[string]string{}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			var parts []geminiPart
			for _, b := range m.Content {
				if b.Type == BlockImage {
					parts = append(parts, geminiPart{InlineData: &geminiBlob{MIMEType: b.MIMEType, Data: b.Data}})
				} else if b.Text != "" {
					parts = append(parts, geminiPart{Text: b.Text})
				}
			}
			add("user", parts...)
		case RoleAssistant:
			var parts []geminiPart
			same := m.Provider == c.p.Name
			for _, b := range m.Content {
				sig := ""
				if same {
					sig = b.Signature
				}
				switch b.Type {
				case BlockText:
					parts = append(parts, geminiPart{Text: b.Text, ThoughtSignature: sig})
				case BlockThinking:
					if same {
						parts = append(parts, geminiPart{Text: b.Thinking, Thought: true, ThoughtSignature: sig})
					}
				case BlockToolCall:
					names[b.ID] = b.Name
					call := &geminiCall{Name: b.Name, Args: b.Arguments}
					if !isGeminiID(b.ID) {
						call.ID = b.ID
					}
					parts = append(parts, geminiPart{FunctionCall: call, ThoughtSignature: sig})
				}
			}
			add("model", parts...)
		case RoleToolResult:
			text, media := toolResultText(m, c.p.Quirks.NoImages, true) // Gemini takes audio as inline data
			resp := &geminiResponse{Name: cmpOr(names[m.ToolCallID], m.ToolName), Response: map[string]any{"output": text}}
			if m.IsError {
				resp.Response = map[string]any{"error": text}
			}
			if !isGeminiID(m.ToolCallID) {
				resp.ID = m.ToolCallID
			}
			parts := []geminiPart{{FunctionResponse: resp}}
			for _, b := range media {
				parts = append(parts, geminiPart{InlineData: &geminiBlob{MIMEType: b.MIMEType, Data: b.Data}})
			}
			add("user", parts...)
		}
	}
	gen := map[string]any{"maxOutputTokens": req.MaxTokens}
	if tc := geminiThinking(req.Model, req.Thinking); tc != nil {
		gen["thinkingConfig"] = tc
	}
	body := map[string]any{"generationConfig": gen}
	if req.System != "" {
		body["systemInstruction"] = geminiContent{Role: "user", Parts: []geminiPart{{Text: req.System}}}
	}
	var tools []byte
	if hasTools(req.Tools) {
		tools = make([]byte, 0, len(req.Tools)+2)
		tools = append(append(append(tools, '['), req.Tools...), ']')
	}
	h := http.Header{}
	if c.key != "" {
		h.Set("x-goog-api-key", c.key)
	}
	b, err := object(c.buffer(), body, field{name: "tools", value: tools}, field{name: "contents", v: contents})
	return "/v1beta/models/" + url.PathEscape(req.Model) + ":streamGenerateContent?alt=sse", h, b, err
}

func isGeminiID(id string) bool {
	return len(id) > len(geminiIDPrefix) && id[:len(geminiIDPrefix)] == geminiIDPrefix
}

type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []geminiPart `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
	Error *struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

func (geminiWire) read(s *sseReader, a *assembler) (string, error) {
	var stop string
	n := 0 // text runs, so text after a call starts a new block
	for {
		name, data, err := s.next()
		if err != nil {
			if err == io.EOF && stop != "" {
				// Gemini ends the stream after the chunk with a finish
				// reason; there is no end event.
				a.done = true
				return stop, nil
			}
			return stop, err
		}
		var ch geminiChunk
		if err := decode(name, data, &ch); err != nil {
			return stop, err
		}
		if ch.Error != nil {
			return stop, &APIError{Provider: a.msg.Provider, Code: ch.Error.Status, Message: ch.Error.Message}
		}
		if u := ch.UsageMetadata; u != nil {
			a.setUsage(Usage{Input: u.PromptTokenCount - u.CachedContentTokenCount, Output: u.CandidatesTokenCount + u.ThoughtsTokenCount, CacheRead: u.CachedContentTokenCount})
		}
		for _, cand := range ch.Candidates {
			for _, p := range cand.Content.Parts {
				key := "g" + strconv.Itoa(n)
				switch {
				case p.FunctionCall != nil:
					id := p.FunctionCall.ID
					if id == "" {
						id = geminiIDPrefix + strconv.Itoa(len(a.msg.Content)) + "_" + randid.New("", 8)
					}
					a.call(id, p.FunctionCall.Name, p.FunctionCall.Args, p.ThoughtSignature)
					n++
				case p.Thought:
					a.thinking(key+"t", p.Text)
					a.block(key+"t", BlockThinking)
					a.signature(key+"t", p.ThoughtSignature)
				default:
					a.block(key, BlockText)
					a.text(key, p.Text)
					a.signature(key, p.ThoughtSignature)
				}
			}
			if cand.FinishReason != "" {
				stop = "stop"
				if cand.FinishReason == "MAX_TOKENS" {
					stop = "length"
				}
			}
		}
	}
}

func (geminiWire) apiError(body []byte) (string, string) {
	var e []struct {
		Error struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// Gemini sends {"error":{…}}, sometimes inside an array.
	if json.Unmarshal(body, &e) != nil {
		var one struct {
			Error struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &one) != nil {
			return "", ""
		}
		return one.Error.Status, one.Error.Message
	}
	if len(e) == 0 {
		return "", ""
	}
	return e[0].Error.Status, e[0].Error.Message
}
