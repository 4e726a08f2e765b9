package invoke

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/tool"
)

// shapeStep is the "shape" step: it makes every result fit for a model (see
// Runner.Shape).
func (r *Runner) shapeStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		return r.Shape(ctx, req, next(ctx, req))
	}
}

// Shape makes a result fit for a model: text, a text resource's included,
// is valid UTF-8 and cut to the configured limit (keeping head and tail
// when the end matters), with the full text kept under the call id for
// result_read; text from outside is wrapped as untrusted content, each
// kept part of a cut in a wrapper of its own, and the whole fits the limit
// wrappers included; images are checked and made to fit; there is at least
// one block; the pipeline's notes join the details.
func (r *Runner) Shape(ctx context.Context, req *Request, res tool.Result) tool.Result {
	blocks := res.Content
	copied := false
	own := func() { // copy before the first change: the tool may share its slice
		if !copied {
			blocks = append([]tool.Content(nil), blocks...)
			copied = true
		}
	}
	texts, textBytes := 0, 0
	for i, c := range blocks {
		if s, ok := modelText(c); ok {
			texts++
			if !utf8.ValidString(c.Text) {
				own()
				blocks[i].Text = content.ValidUTF8(c.Text)
				s, _ = modelText(blocks[i])
			}
			textBytes += len(s)
			if c.Origin.IsExternal() && !c.Origin.Wrapped {
				textBytes += r.wrapping(c.Origin).Overhead()
			}
			continue
		}
		switch c.Type {
		case tool.ImageContent:
			f := content.FitImage(c.Data, c.MIMEType, r.cfg.Images)
			switch {
			case f.Note != "":
				own()
				blocks[i] = tool.Content{Type: tool.TextContent, Text: f.Note}
				texts++
				textBytes += len(f.Note)
			case f.Data != c.Data || f.MIMEType != c.MIMEType:
				own()
				blocks[i] = tool.Content{Type: tool.ImageContent, Data: f.Data, MIMEType: f.MIMEType}
				if f.Resized {
					req.Note("imageResized", map[string]int{"width": f.Width, "height": f.Height})
				}
			}
		case tool.AudioContent, tool.ResourceContent: // audio and binary resources pass on as they are: front doors and encoders decide who takes them
		default:
			own()
			blocks[i] = tool.Content{Type: tool.TextContent, Text: fmt.Sprintf("[content of unknown type %q omitted]", c.Type)}
		}
	}
	if limit := r.cfg.MaxResultChars; textBytes > limit {
		blocks = r.cut(ctx, req, blocks, texts, res.IsError)
	}
	res.Content = r.wrapExternal(blocks)
	res = Envelop(req.Tool.Name, complete(res))
	res.Details = withNotes(res.Details, req.notes)
	return res
}

// Envelop puts an error result whose text is not already an envelope —
// invalid arguments, a failed validation, an unknown tool, a tool's own
// error text — into {"status":"error","tool":NAME,"error":TEXT}, so every
// error reaches a model, through every front door, in the same shape. The
// human-readable text is kept whole inside "error" (text from outside
// wrapped as untrusted content before it goes in); blocks after the first
// (an image) stay as they are.
func Envelop(name string, res tool.Result) tool.Result {
	if !res.IsError || len(res.Content) == 0 || res.Content[0].Type != tool.TextContent {
		return res
	}
	if _, ok := tool.ParseEnvelope(res.Content[0].Text); ok {
		return res
	}
	wrapped := tool.Envelope{Status: "error", Tool: name, Error: res.Content[0].Text}.Result()
	if o := res.Content[0].Origin; o.IsExternal() {
		wrapped.Content[0].Origin = o
	}
	res.Content = append(wrapped.Content, res.Content[1:]...)
	return res
}

// cut joins the text blocks, keeps the full text under the call id, and puts
// a cut version in place of the first text block. A text resource is one of
// them, as a model reads it (its URI and MIME type, then its text): cut, it
// becomes part of that text block. When any of the text is
// from outside, all of it is taken as such: it is kept with that origin
// (marker-like text neutralized first, so that offsets into it hold), and
// the kept head and tail are wrapped each on its own, with the notice
// between them, outside the wrappers.
func (r *Runner) cut(ctx context.Context, req *Request, blocks []tool.Content, texts int, isError bool) []tool.Content {
	var (
		parts  []string
		origin *tool.Origin
	)
	for _, c := range blocks {
		if s, ok := modelText(c); ok {
			parts = append(parts, s)
			if origin == nil && c.Origin.IsExternal() {
				origin = &tool.Origin{External: true, Source: c.Origin.Source}
			}
		}
	}
	full := strings.Join(parts, "\n")
	overhead := 0
	var head, tail content.Wrap
	if origin != nil {
		full = content.Neutralize(full)
		head = r.wrapping(origin)
		tail = head
		tail.OmitNotice = true
		overhead = head.Overhead()
	}
	keepTail := isError || content.EndMatters(full)
	if keepTail && origin != nil {
		overhead += tail.Overhead() + 1
	}
	limit := r.tokenLimit()
	if c := content.Truncate(full, r.cfg.MaxResultChars-overhead, keepTail); !c.Truncated() && (limit == 0 || r.cfg.CountTokens(full) <= limit) {
		return blocks
	}
	id := req.Call.ID
	// A page of the rest fits in one result, with room for its footer.
	page := max(r.cfg.MaxResultChars-200, r.cfg.MaxResultChars/2)
	// The cut text, notice and wrappers included, fits the cap: shaping it
	// again changes nothing. The notice is measured with the largest
	// numbers it can hold.
	total := len(full)
	budget := max(r.cfg.MaxResultChars-overhead-utf8.RuneCountInString(content.ReadOnNotice(total, id, total, total))-2, r.cfg.MaxResultChars/2)
	c := content.Truncate(full, budget, keepTail)
	if limit > 0 {
		c = r.fitTokens(full, c, limit, keepTail)
	}
	omitted, kept := c.Omitted, error(nil)
	if more, ok := r.keptAlready(ctx, id, c); ok {
		// The tool kept a longer text of which this is the head (web_fetch
		// past its maxChars): the notice reads on in it, and it stays.
		omitted = more
	} else {
		keep := ctx
		if origin != nil {
			keep = tool.WithOrigin(ctx, *origin)
		}
		if kept = r.outputs.Put(keep, id, full); kept != nil {
			req.logger().Warn("keeping the full output failed", "call", id, "err", kept)
		}
	}
	notice := func(omitted, offset int) string {
		if kept == nil {
			return content.ReadOnNotice(omitted, id, offset, min(omitted, page))
		}
		return content.Omission(omitted)
	}
	block := tool.Content{Type: tool.TextContent}
	headText, tailText := c.Head, c.Tail
	if origin != nil {
		headText = content.WrapExternal(headText, head)
		if tailText != "" {
			tailText = content.WrapExternal(tailText, tail)
		}
		block.Origin = &tool.Origin{External: true, Source: origin.Source, Wrapped: true}
	}
	block.Text = headText + "\n" + notice(omitted, c.HeadEnd)
	if tailText != "" {
		block.Text += "\n" + tailText
	}
	req.Note("truncated", map[string]any{"callId": id, "totalChars": c.HeadEnd + c.Omitted + utf8.RuneCountInString(c.Tail), "omittedChars": c.Omitted})
	out := make([]tool.Content, 0, len(blocks)-texts+1)
	placed := false
	for _, b := range blocks {
		if _, ok := modelText(b); !ok {
			out = append(out, b)
		} else if !placed {
			out = append(out, block)
			placed = true
		}
	}
	return out
}

// modelText is the text a model reads of a block that counts toward the
// result's size — a text block's text, a text resource's description
// (tool.Content.Describe: its URI and MIME type, then its text) — and
// whether the block is one.
func modelText(c tool.Content) (string, bool) {
	switch {
	case c.Type == tool.TextContent:
		return c.Text, true
	case c.Type == tool.ResourceContent && c.Data == "" && c.Text != "":
		return c.Describe(), true
	}
	return "", false
}

// keptAlready reports whether the call's tool kept a text of its own for
// result_read of which the cut c's head is the head — web_fetch keeps a
// page longer than its maxChars and returns its head, then its notice —
// and how many characters of that text follow the head. The pipeline then
// keeps nothing of its own under the call's id: it would replace the
// longer text.
func (r *Runner) keptAlready(ctx context.Context, id string, c content.Cut) (more int, ok bool) {
	prior, found, err := r.outputs.Get(ctx, id)
	if err != nil || !found || !strings.HasPrefix(prior.Text, c.Head) {
		return 0, false
	}
	return utf8.RuneCountInString(prior.Text) - c.HeadEnd, true
}

// tokenLimit is the result cap in tokens, or 0 when there is none.
func (r *Runner) tokenLimit() int {
	limit := r.cfg.MaxResultTokens
	if r.cfg.ContextWindow > 0 && r.cfg.ContextShare > 0 {
		share := int(float64(r.cfg.ContextWindow) * r.cfg.ContextShare)
		if limit == 0 || share < limit {
			limit = share
		}
	}
	return limit
}

// estimateTokens reckons a token at three bytes (Config.CountTokens).
func estimateTokens(s string) int { return (len(s) + 2) / 3 }

// fitTokens shrinks a cut until its kept text is within limit tokens.
func (r *Runner) fitTokens(full string, c content.Cut, limit int, keepTail bool) content.Cut {
	chars := c.HeadEnd + utf8.RuneCountInString(c.Tail)
	for range 8 {
		n := r.cfg.CountTokens(c.Head + c.Tail)
		if n < 0 || n <= limit || chars == 0 {
			return c
		}
		chars = int(float64(chars) * float64(limit) / float64(n) * 0.95)
		c = content.Truncate(full, chars, keepTail)
	}
	return c
}

// eventResult shapes a result for events: text cut to EventMaxChars, images
// and audio replaced by their size, and the error text for errors.
func (r *Runner) eventResult(res tool.Result) *EventResult {
	return ShapeEventResult(res, r.cfg.EventMaxChars)
}

// ShapeEventResult shapes a result as events carry it: each text cut to
// maxChars, images and audio replaced by their size, and the error text
// for errors.
func ShapeEventResult(res tool.Result, maxChars int) *EventResult {
	ev := &EventResult{Content: make([]EventContent, len(res.Content)), Details: res.Details, IsError: res.IsError}
	for i, c := range res.Content {
		switch c.Type {
		case tool.ImageContent, tool.AudioContent:
			ev.Content[i] = EventContent{Type: c.Type, MIMEType: c.MIMEType, Bytes: base64Len(c.Data), Omitted: true}
		case tool.ResourceContent:
			ev.Content[i] = EventContent{Type: c.Type, MIMEType: c.MIMEType, Text: content.Head(c.Describe(), maxChars, "…(truncated)…")}
		default:
			ev.Content[i] = EventContent{Type: c.Type, Text: content.Head(c.Text, maxChars, "…(truncated)…")}
		}
	}
	if res.IsError {
		ev.Error = ErrorText(res)
	}
	return ev
}

func base64Len(s string) int { return len(s) * 3 / 4 }

// MaxErrorChars caps the error text of events.
const MaxErrorChars = 400

// ErrorText extracts the error of a result for events and logs, by this
// priority: the details' "error", "message" or "reason"; an error-like
// "status" in the details; an envelope's error, reason or message; the first
// non-empty text line. It is one line of at most 400 characters.
func ErrorText(res tool.Result) string {
	if d, ok := res.Details.(map[string]any); ok {
		for _, k := range []string{"error", "message", "reason"} {
			if s, ok := d[k].(string); ok && strings.TrimSpace(s) != "" {
				return content.FirstLine(s, MaxErrorChars)
			}
		}
		if s, ok := d["status"].(string); ok && isErrorStatus(s) {
			return content.FirstLine(s, MaxErrorChars)
		}
	}
	for _, c := range res.Content {
		if c.Type != tool.TextContent {
			continue
		}
		if env, ok := tool.ParseEnvelope(c.Text); ok {
			for _, s := range []string{env.Error, env.Reason, env.Message} {
				if s != "" {
					return content.FirstLine(s, MaxErrorChars)
				}
			}
		}
		if line := content.FirstLine(c.Text, MaxErrorChars); line != "" {
			return line
		}
	}
	return ""
}

func isErrorStatus(s string) bool {
	switch strings.ToLower(s) {
	case "error", "failed", "failure", "blocked", "denied", "timeout", "timed_out", "cancelled", "canceled":
		return true
	}
	return false
}

// MemoryOutputs keeps full outputs in memory, dropping the oldest when the
// total passes a bound. It is safe for concurrent use.
type MemoryOutputs struct {
	mu    sync.Mutex
	max   int
	size  int
	order []string
	kept  map[string]memoryOutput
}

// memoryOutput is an output with the scope it was kept in.
type memoryOutput struct {
	tool.Output
	scope tool.Scope
}

// NewMemoryOutputs returns an output store that holds at most maxBytes.
func NewMemoryOutputs(maxBytes int) *MemoryOutputs {
	return &MemoryOutputs{max: maxBytes, kept: map[string]memoryOutput{}}
}

// Put keeps text under callID, replacing what was there, with the scope and
// origin ctx carries.
func (m *MemoryOutputs) Put(ctx context.Context, callID, text string) error {
	if len(text) > m.max {
		return fmt.Errorf("output of %d bytes is larger than the store (%d bytes)", len(text), m.max)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.kept[callID]; ok {
		m.size -= len(old.Text)
		m.order = removeString(m.order, callID)
	}
	scope, _ := tool.ScopeFrom(ctx)
	m.kept[callID] = memoryOutput{tool.Output{Text: text, Origin: tool.OriginFrom(ctx)}, scope}
	m.order = append(m.order, callID)
	m.size += len(text)
	for m.size > m.max && len(m.order) > 0 {
		oldest := m.order[0]
		m.order = m.order[1:]
		m.size -= len(m.kept[oldest].Text)
		delete(m.kept, oldest)
	}
	return nil
}

// Get returns the output kept under callID, when the scope ctx carries may
// see it (see tool.Scope.Sees).
func (m *MemoryOutputs) Get(ctx context.Context, callID string) (tool.Output, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.kept[callID]
	if asked, _ := tool.ScopeFrom(ctx); !ok || !asked.Sees(o.scope) {
		return tool.Output{}, false, nil
	}
	return o.Output, true, nil
}

func removeString(list []string, s string) []string {
	for i, v := range list {
		if v == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}
