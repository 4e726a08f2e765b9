// Package llm talks to model providers: thin HTTP and server-sent-event
// clients for Anthropic Messages, OpenAI Chat Completions and Responses,
// Google Gemini and OpenAI-compatible servers (Ollama, vLLM, llama.cpp,
// LM Studio, Mistral, OpenRouter, xAI, DeepSeek, Groq).
//
// A client streams one model response: text, thinking and tool-call deltas
// arrive as [Event]s, tool-call arguments are assembled from their
// fragments (parsed as they grow, repaired at the end), and the response
// comes back as one assistant [Message] in a provider-neutral transcript.
// The same transcript goes back to any provider: each client writes it in
// its own wire format, with call ids as the provider issued them.
//
//	c, _ := llm.New("anthropic/claude-sonnet-4-5", llm.Options{})
//	msg, err := c.Stream(ctx, llm.Request{Messages: msgs, Tools: tools}, onEvent)
package llm

import (
	"encoding/json"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// The roles of a transcript's messages.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = tool.RoleToolResult
)

// The types of content blocks.
const (
	BlockText     = "text"
	BlockThinking = "thinking"
	BlockToolCall = "toolCall"
	BlockImage    = "image"
	BlockAudio    = "audio"
)

// Message is one message of a transcript: a user's, the model's (assistant)
// or a tool's result (toolResult, the same fields as [tool.ResultMessage]).
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`

	// ToolCallID and ToolName say which call a toolResult answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// CallID is Toolbelt's own id of the call a toolResult answers (see
	// tool.NewCallID): the audit log and the undo journal name the call by
	// it, so a session's transcript says which files each turn changed.
	// Never sent to a model.
	CallID string `json:"callId,omitempty"`
	// Details is a result's structured data; never sent to a model.
	Details any `json:"details,omitempty"`
	// IsError says a toolResult reports a failure. A toolResult always
	// carries it, false included, as the seeds' protocol shows (see
	// MarshalJSON); other messages never do.
	IsError bool `json:"isError,omitempty"`

	// Provider and Model name who wrote an assistant message.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Usage    *Usage `json:"usage,omitempty"`
	// StopReason is why an assistant message ended: "stop", "length",
	// "toolUse", "error" or "aborted".
	StopReason string `json:"stopReason,omitempty"`
	// ErrorMessage says what went wrong when StopReason is error or aborted.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Timestamp is when the message was complete, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`

	// Compaction marks a user message that holds a summary of the
	// conversation before it (see [Compaction]); never sent to a model.
	Compaction *Compaction `json:"compaction,omitempty"`
}

// Compaction says what a compaction of a transcript summarized. The
// transcript itself keeps every message: a model is sent the summary, then
// the messages from FirstKept on (the compaction's own message left out),
// with the tool results before ElideBefore replaced by their head and a
// result_read handle.
type Compaction struct {
	// FirstKept is the transcript index of the first message kept whole.
	FirstKept int `json:"firstKept"`
	// ElideBefore is the transcript index before which the kept tool
	// results are elided.
	ElideBefore int `json:"elideBefore"`
	// Summarized counts the messages the summary replaces.
	Summarized int `json:"summarized"`
	// TokensBefore and TokensAfter are the estimated tokens of what the
	// model is sent, before and after the compaction.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
}

// Block is a content block: text, thinking, a tool call or an image.
type Block struct {
	Type string `json:"type"`
	// Text is a text block's text.
	Text string `json:"text,omitempty"`
	// Thinking is a thinking block's text.
	Thinking string `json:"thinking,omitempty"`
	// Signature is provider data that must go back unchanged with the
	// block: Anthropic's thinking signature, Gemini's thoughtSignature (on
	// a thinking, text or tool-call block).
	Signature string `json:"signature,omitempty"`
	// ID, Name and Arguments are a tool call's: the id exactly as the
	// provider issued it, the name as the model wrote it, and the arguments
	// as a JSON object (repaired where the model broke them).
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Repair says what repairing the arguments changed.
	Repair string `json:"repair,omitempty"`
	// InvalidArguments holds arguments that could not be repaired into an
	// object, as the model sent them (Arguments is then {}).
	InvalidArguments string `json:"invalidArguments,omitempty"`
	// Data and MIMEType are an image's or audio's base64 bytes and media
	// type.
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`

	args *ArgBuffer // the arguments while they stream
}

// Usage counts a response's tokens.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	// Cost is what the tokens cost, in the currency of the configured
	// prices; 0 when none are configured.
	Cost float64 `json:"cost,omitempty"`
}

// Price is a model's price per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cacheRead" yaml:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite" yaml:"cacheWrite"`
}

// CostOf returns what usage u costs at price p.
func (p Price) CostOf(u Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output + float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}

// Add adds u2 to u.
func (u *Usage) Add(u2 Usage) {
	u.Input += u2.Input
	u.Output += u2.Output
	u.CacheRead += u2.CacheRead
	u.CacheWrite += u2.CacheWrite
	u.Cost += u2.Cost
}

// MarshalJSON writes the message; a toolResult with its isError even when
// false, as the seeds' protocol shows a result message.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	if m.Role != RoleToolResult {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		IsError bool `json:"isError"`
	}{plain(m), m.IsError})
}

// UserText returns a user message with one text block.
func UserText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: text}}, Timestamp: time.Now().UnixMilli()}
}

// ToolResult returns a tool's result message as a transcript message.
func ToolResult(m tool.ResultMessage) Message {
	out := Message{Role: RoleToolResult, ToolCallID: m.ToolCallID, ToolName: m.ToolName, Details: m.Details, IsError: m.IsError, Timestamp: m.Timestamp}
	for _, c := range m.Content {
		switch c.Type {
		case tool.ImageContent:
			out.Content = append(out.Content, Block{Type: BlockImage, Data: c.Data, MIMEType: c.MIMEType})
		case tool.AudioContent:
			out.Content = append(out.Content, Block{Type: BlockAudio, Data: c.Data, MIMEType: c.MIMEType})
		case tool.ResourceContent: // no provider takes embedded resources: they are described
			out.Content = append(out.Content, Block{Type: BlockText, Text: c.Describe()})
		default:
			out.Content = append(out.Content, Block{Type: BlockText, Text: c.Text})
		}
	}
	return out
}

// ToolCalls returns an assistant message's tool calls, in the model's order.
func (m Message) ToolCalls() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolCall {
			out = append(out, b)
		}
	}
	return out
}

// Text returns the message's text blocks joined.
func (m Message) Text() string {
	var s string
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// Request is one model request.
type Request struct {
	// Model is the model's name at the provider; empty: the client's.
	Model string
	// System is the system prompt.
	System string
	// Messages is the transcript so far.
	Messages []Message
	// Tools is the request's tool list in the provider's format, from
	// [provider.Exporter.Export] for the client's [Client.Target].
	Tools json.RawMessage
	// MaxTokens bounds the response; 0: the client's default. Where a
	// provider counts thinking in it (Anthropic), the thinking budget is
	// added.
	MaxTokens int
	// Thinking is the thinking level (ThinkingOff … ThinkingHigh), mapped
	// to each provider's parameter; empty: the provider's default.
	Thinking string

	// wireNames are the names tools go out as, where they differ from the
	// tools' own (Anthropic OAuth sessions).
	wireNames map[string]string
}

// EventType names a streaming event.
type EventType string

// The streaming events.
const (
	EventTextDelta     EventType = "text_delta"
	EventThinkingDelta EventType = "thinking_delta"
	EventToolCallStart EventType = "toolcall_start"
	EventToolCallDelta EventType = "toolcall_delta"
	EventToolCallEnd   EventType = "toolcall_end"
)

// Event is a piece of a streaming response.
type Event struct {
	Type EventType `json:"type"`
	// Index is the content block's index in the message.
	Index int `json:"contentIndex"`
	// Delta is the text, thinking or argument fragment that arrived.
	Delta string `json:"delta,omitempty"`
	// ID and Name are the tool call's.
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Arguments are, for toolcall_delta, the arguments parsed so far (set
	// when they could be re-parsed, which happens less often as they grow)
	// and for toolcall_end the final arguments.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// ToolCall is, for toolcall_end, the assembled call {type, id, name,
	// arguments}, as the seeds' event carries it.
	ToolCall *Block `json:"toolCall,omitempty"`
}
