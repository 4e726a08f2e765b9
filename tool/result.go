package tool

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ContentType names a kind of content block.
type ContentType string

// The content block kinds.
const (
	TextContent  ContentType = "text"
	ImageContent ContentType = "image"
	AudioContent ContentType = "audio"
	// ResourceContent is an embedded resource: the contents of the
	// resource at URI, text (Text) or binary (Data), with its MIME type.
	ResourceContent ContentType = "resource"
)

// Content is one block of a result: text, an image or audio as base64
// data with its MIME type, or an embedded resource.
type Content struct {
	Type ContentType
	// Text is the text of a text block, or of a text resource.
	Text string
	// Data is the base64-encoded bytes of an image or audio block, or of
	// a binary resource.
	Data string
	// MIMEType is the media type of an image, audio or resource block
	// ("image/png", "audio/wav", "text/plain").
	MIMEType string
	// URI is the URI of an embedded resource.
	URI string
	// Origin says where a text block came from. Nil, in what a tool
	// returns, means as its metadata says: from outside for a tool marked
	// [Meta.ExternalContent], else the tool's own words. It never goes on
	// the wire.
	Origin *Origin
}

type textJSON struct {
	Type ContentType `json:"type"`
	Text string      `json:"text"`
}

// mediaJSON is an image or audio block, in MCP's shape.
type mediaJSON struct {
	Type     ContentType `json:"type"`
	Data     string      `json:"data"`
	MIMEType string      `json:"mimeType"`
}

// resourceJSON is an embedded resource block, in MCP's shape: its
// contents' text or blob (base64).
type resourceJSON struct {
	Type     ContentType `json:"type"`
	Resource struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text,omitempty"`
		Blob     string `json:"blob,omitempty"`
	} `json:"resource"`
}

// MarshalJSON encodes a text block as {"type":"text","text":…}, an image
// block as {"type":"image","data":…,"mimeType":…}, an audio block as
// {"type":"audio","data":…,"mimeType":…} and a resource block as
// {"type":"resource","resource":{"uri":…,"mimeType":…,"text"|"blob":…}}.
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case TextContent:
		return json.Marshal(textJSON{c.Type, c.Text})
	case ImageContent, AudioContent:
		return json.Marshal(mediaJSON{c.Type, c.Data, c.MIMEType})
	case ResourceContent:
		r := resourceJSON{Type: c.Type}
		r.Resource.URI, r.Resource.MIMEType, r.Resource.Text, r.Resource.Blob = c.URI, c.MIMEType, c.Text, c.Data
		return json.Marshal(r)
	}
	return nil, fmt.Errorf("content block has unknown type %q", c.Type)
}

// UnmarshalJSON decodes a block written by MarshalJSON.
func (c *Content) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type     ContentType `json:"type"`
		Text     string      `json:"text"`
		Data     string      `json:"data"`
		MIMEType string      `json:"mimeType"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	switch raw.Type {
	case TextContent, ImageContent, AudioContent:
		*c = Content{Type: raw.Type, Text: raw.Text, Data: raw.Data, MIMEType: raw.MIMEType}
		return nil
	case ResourceContent:
		var r resourceJSON
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		*c = Content{Type: raw.Type, URI: r.Resource.URI, MIMEType: r.Resource.MIMEType, Text: r.Resource.Text, Data: r.Resource.Blob}
		return nil
	}
	return fmt.Errorf("content block has unknown type %q", raw.Type)
}

// Describe is a resource block in words, for who takes no embedded
// resources (a model, a terminal): a line naming the resource, then its
// text; a binary one by its size only.
func (c Content) Describe() string {
	head := "[resource: " + c.URI
	if c.MIMEType != "" {
		head += ", " + c.MIMEType
	}
	if c.Data != "" || c.Text == "" {
		n := len(c.Data) / 4 * 3
		n -= len(c.Data) - len(strings.TrimRight(c.Data, "="))
		return fmt.Sprintf("%s, %d bytes, binary, not shown]", head, max(n, 0))
	}
	return head + "]\n" + c.Text
}

// Result is what a tool returns: content for the model, details for programs.
type Result struct {
	// Content is what the model sees.
	Content []Content `json:"content"`
	// Details is structured data for programs and user interfaces; it is never
	// sent to a model.
	Details any `json:"details,omitempty"`
	// IsError marks a failed call.
	IsError bool `json:"isError"`
	// Undo is what taking the call back needs, for a tool with an undo
	// step (Tool.Undo): any value that encodes as JSON, kept with the call
	// by the pipeline when the call succeeds. It is never sent to a model
	// or a client.
	Undo any `json:"-"`
}

// Text returns a result with one text block.
func Text(text string) Result {
	return Result{Content: []Content{{Type: TextContent, Text: text}}}
}

// Textf returns a result with one formatted text block.
func Textf(format string, args ...any) Result {
	return Text(fmt.Sprintf(format, args...))
}

// Errorf returns an error result whose text, meant for the model, is formatted
// from format and args.
func Errorf(format string, args ...any) Result {
	r := Textf(format, args...)
	r.IsError = true
	return r
}

// JSON returns a result whose text is v as indented JSON and whose details are
// v itself. It fails only when v cannot be encoded as JSON.
func JSON(v any) (Result, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Result{}, fmt.Errorf("encoding result as JSON: %w", err)
	}
	return Result{Content: []Content{{Type: TextContent, Text: string(b)}}, Details: v}, nil
}

// Image returns a result with a text block (a caption for the model) followed
// by the image, base64-encoded.
func Image(caption string, data []byte, mimeType string) Result {
	return Result{Content: []Content{
		{Type: TextContent, Text: caption},
		{Type: ImageContent, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mimeType},
	}}
}

// InputError is an error whose message is written for the model: it says
// what was wrong with the input and what to do instead. Tools return it when
// arguments are valid JSON Schema-wise but unusable (a path that does not
// exist, an edit that matches nothing).
type InputError struct {
	Message string
}

func (e *InputError) Error() string { return e.Message }

// InputErrorf returns an [*InputError] with a formatted message.
func InputErrorf(format string, args ...any) error {
	return &InputError{Message: fmt.Sprintf(format, args...)}
}

// IsInputError reports whether err is, or wraps, an [*InputError].
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Envelope is the JSON text a model sees when a call did not run normally.
type Envelope struct {
	// Status is "error", "blocked" or "pending".
	Status string `json:"status"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Error is set when Status is "error".
	Error string `json:"error,omitempty"`
	// Reason is set when Status is "blocked".
	Reason string `json:"reason,omitempty"`
	// Message is set when Status is "pending".
	Message string `json:"message,omitempty"`
	// CanRetry, when set, tells the model whether the same call may succeed later.
	CanRetry *bool `json:"canRetry,omitempty"`
	// Suggestion tells the model what to try instead.
	Suggestion string `json:"suggestion,omitempty"`
}

// Result returns the envelope as an error result whose text is its JSON.
func (e Envelope) Result() Result {
	// Not json.Marshal: it would write <, > and & as \u003c…, which a
	// model reads worse than the characters themselves.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	text := `{"status":"error"}`
	if enc.Encode(e) == nil { // it cannot fail: every field is a string or bool
		text = strings.TrimSuffix(b.String(), "\n")
	}
	// The envelope is the pipeline's or the tool's own words; text from
	// outside that it quotes must be wrapped before it goes in.
	r := Result{Content: []Content{{Type: TextContent, Text: text, Origin: OwnWords()}}, IsError: true}
	return r
}

// ParseEnvelope reads text as an envelope: a JSON object whose "status" is
// "error", "blocked" or "pending". It reports false for any other text.
func ParseEnvelope(text string) (Envelope, bool) {
	var e Envelope
	if !strings.HasPrefix(strings.TrimSpace(text), "{") || json.Unmarshal([]byte(text), &e) != nil {
		return Envelope{}, false
	}
	switch e.Status {
	case "error", "blocked", "pending":
		return e, true
	}
	return Envelope{}, false
}

// ResultMessage is what goes back to the model for one call.
type ResultMessage struct {
	Role       string    `json:"role"`
	ToolCallID string    `json:"toolCallId"`
	ToolName   string    `json:"toolName"`
	Content    []Content `json:"content"`
	Details    any       `json:"details"`
	IsError    bool      `json:"isError"`
	// Timestamp is when the call ended, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
}

// RoleToolResult is the role of a [ResultMessage].
const RoleToolResult = "toolResult"
