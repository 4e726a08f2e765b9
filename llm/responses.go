package llm

import (
	"net/http"
)

// responsesWire is the OpenAI Responses API: POST /responses with
// stream: true and store: false, the transcript sent whole as input items.
type responsesWire struct{}

// The input items of a Responses request, and their content parts.
type (
	responsesMessage struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}
	responsesCall struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	responsesOutput struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		// Output is the result's text, or a list of parts with its images.
		Output any `json:"output"`
	}
	responsesText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	responsesImage struct {
		Type     string `json:"type"`
		ImageURL string `json:"image_url"`
		Detail   string `json:"detail,omitempty"`
	}
)

// responsesHead is a request's fields before its tools and input.
type responsesHead struct {
	Model           string `json:"model"`
	Stream          bool   `json:"stream"`
	Store           bool   `json:"store"`
	MaxOutputTokens int    `json:"max_output_tokens"`
	Instructions    string `json:"instructions,omitempty"`
	Reasoning       *struct {
		Effort string `json:"effort"`
	} `json:"reasoning,omitempty"`
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
}

func (responsesWire) request(c *client, req Request) (string, http.Header, []byte, error) {
	ids := c.p.idMap()
	noImages := c.p.Quirks.NoImages
	var input []any
	userContent := func(blocks []Block) []any {
		parts := make([]any, 0, len(blocks))
		for _, b := range blocks {
			switch {
			case b.Type == BlockImage && noImages:
				parts = append(parts, responsesText{Type: "input_text", Text: "(an image omitted: this model does not accept images)"})
			case b.Type == BlockImage:
				parts = append(parts, responsesImage{Type: "input_image", ImageURL: dataURL(b)})
			default:
				parts = append(parts, responsesText{Type: "input_text", Text: b.Text})
			}
		}
		return parts
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			input = append(input, responsesMessage{Type: "message", Role: "user", Content: userContent(m.Content)})
		case RoleAssistant:
			for _, b := range m.Content {
				switch b.Type {
				case BlockText:
					input = append(input, responsesMessage{Type: "message", Role: "assistant", Content: []any{responsesText{Type: "output_text", Text: b.Text}}})
				case BlockToolCall:
					args := string(b.Arguments)
					if b.InvalidArguments != "" {
						args = b.InvalidArguments
					}
					input = append(input, responsesCall{Type: "function_call", CallID: wireID(ids, b.ID), Name: b.Name, Arguments: args})
				}
			}
		case RoleToolResult:
			input = append(input, responsesOutput{Type: "function_call_output", CallID: wireID(ids, m.ToolCallID), Output: functionOutput(m, noImages)})
		}
	}
	head := responsesHead{Model: req.Model, Stream: true, MaxOutputTokens: req.MaxTokens, Instructions: req.System}
	if effort := openAIEffort(c.p.Name, req.Model, req.Thinking); effort != "" {
		head.Reasoning = &struct {
			Effort string `json:"effort"`
		}{effort}
	}
	var tools []byte
	if hasTools(req.Tools) {
		tools = req.Tools
		if c.p.Quirks.NoParallelCalls {
			head.ParallelToolCalls = new(bool)
		}
	}
	h := http.Header{}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
	b, err := object(c.buffer(), head, field{name: "tools", value: tools}, field{name: "input", v: input})
	return "/responses", h, b, err
}

// functionOutput is a tool result as a function_call_output's output: its
// text, or — when it has images the model takes — a list of input_text and
// input_image items, so the images stay with the call they answer.
func functionOutput(m Message, noImages bool) any {
	text, images := toolResultText(m, noImages, false)
	if len(images) == 0 {
		return text
	}
	items := make([]any, 0, len(images)+1)
	if text != "" {
		items = append(items, responsesText{Type: "input_text", Text: text})
	}
	for _, b := range images {
		items = append(items, responsesImage{Type: "input_image", ImageURL: dataURL(b), Detail: "auto"})
	}
	return items
}

type responsesEvent struct {
	Type        string `json:"type"`
	OutputIndex int    `json:"output_index"`
	ItemID      string `json:"item_id"`
	Delta       string `json:"delta"`
	Item        struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"item"`
	Response struct {
		Status            string `json:"status"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Usage *struct {
			InputTokens        int `json:"input_tokens"`
			OutputTokens       int `json:"output_tokens"`
			InputTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Arguments string `json:"arguments"`
}

func (responsesWire) read(s *sseReader, a *assembler) (string, error) {
	var stop string
	for {
		name, data, err := s.next()
		if err != nil {
			return stop, err
		}
		var e responsesEvent
		if err := decode(name, data, &e); err != nil {
			return stop, err
		}
		switch e.Type {
		case "response.output_item.added":
			if e.Item.Type == "function_call" {
				a.callStart(e.Item.ID, e.Item.CallID, e.Item.Name)
				a.callDelta(e.Item.ID, e.Item.Arguments)
			}
		case "response.function_call_arguments.delta":
			a.callDelta(e.ItemID, e.Delta)
		case "response.function_call_arguments.done":
			// Servers that send the arguments only whole.
			if i, ok := a.keys[e.ItemID]; ok && a.msg.Content[i].args.Len() == 0 {
				a.callDelta(e.ItemID, e.Arguments)
			}
		case "response.output_text.delta", "response.refusal.delta":
			a.text(e.ItemID, e.Delta)
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			a.thinking(e.ItemID, e.Delta)
		case "response.completed", "response.incomplete":
			r := e.Response
			if u := r.Usage; u != nil {
				us := Usage{Input: u.InputTokens, Output: u.OutputTokens}
				if u.InputTokensDetails != nil {
					us.CacheRead = u.InputTokensDetails.CachedTokens
					us.Input -= us.CacheRead
				}
				a.setUsage(us)
			}
			stop = "stop"
			if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens" {
				stop = "length"
			}
			a.done = true
			return stop, nil
		case "response.failed":
			if r := e.Response.Error; r != nil {
				return stop, &APIError{Provider: a.msg.Provider, Code: r.Code, Message: r.Message}
			}
			return stop, &APIError{Provider: a.msg.Provider, Message: "the response failed"}
		case "error":
			return stop, &APIError{Provider: a.msg.Provider, Code: e.Code, Message: e.Message}
		}
	}
}

func (responsesWire) apiError(body []byte) (string, string) { return openAIError(body) }
