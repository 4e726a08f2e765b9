package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/internal/randid"
)

// assembler builds an assistant message from a stream's pieces. Blocks are
// found by a key the wire format gives them (Anthropic's index, an OpenAI
// tool call's index, a Responses item id).
type assembler struct {
	msg  Message
	keys map[string]int // key → index in msg.Content
	on   func(Event)
	// listens: on was given (the partial arguments are parsed only for it).
	listens bool
	usage   Usage
	hasUse  bool
	done    bool   // the stream said it was complete
	price   *Price // nil: no cost
	// names maps the tool names the provider calls back to the tools' own.
	names map[string]string
}

func newAssembler(provider, model string, on func(Event)) *assembler {
	listens := on != nil
	if on == nil {
		on = func(Event) {}
	}
	return &assembler{msg: Message{Role: RoleAssistant, Provider: provider, Model: model}, keys: map[string]int{}, on: on, listens: listens}
}

// block returns the block for key, appending one of type typ when there is
// none (or when the block for key has another type).
func (a *assembler) block(key, typ string) (int, *Block) {
	if i, ok := a.keys[key]; ok && a.msg.Content[i].Type == typ {
		return i, &a.msg.Content[i]
	}
	a.msg.Content = append(a.msg.Content, Block{Type: typ})
	i := len(a.msg.Content) - 1
	a.keys[key] = i
	return i, &a.msg.Content[i]
}

func (a *assembler) text(key, delta string) {
	if delta == "" {
		return
	}
	i, b := a.block(key, BlockText)
	b.Text += delta
	a.on(Event{Type: EventTextDelta, Index: i, Delta: delta})
}

func (a *assembler) thinking(key, delta string) {
	if delta == "" {
		return
	}
	i, b := a.block(key, BlockThinking)
	b.Thinking += delta
	a.on(Event{Type: EventThinkingDelta, Index: i, Delta: delta})
}

// signature sets the provider data of the block for key.
func (a *assembler) signature(key, sig string) {
	if i, ok := a.keys[key]; ok {
		a.msg.Content[i].Signature += sig
	}
}

// callStart starts a tool call.
func (a *assembler) callStart(key, id, name string) {
	i, b := a.block(key, BlockToolCall)
	if b.args == nil {
		b.args = &ArgBuffer{}
	}
	if id != "" {
		b.ID = id
	}
	if own, ok := a.names[name]; ok {
		name = own
	}
	if name != "" {
		b.Name += name
	}
	a.on(Event{Type: EventToolCallStart, Index: i, ID: b.ID, Name: b.Name})
}

// callDelta adds an argument fragment to a tool call.
func (a *assembler) callDelta(key, delta string) {
	if delta == "" {
		return
	}
	i, b := a.block(key, BlockToolCall)
	if b.args == nil {
		b.args = &ArgBuffer{}
	}
	b.args.Write([]byte(delta))
	if !a.listens {
		return
	}
	partial, _ := b.args.Partial()
	a.on(Event{Type: EventToolCallDelta, Index: i, ID: b.ID, Name: b.Name, Delta: delta, Arguments: partial})
}

// call adds a whole tool call (Gemini sends calls whole).
func (a *assembler) call(id, name string, args json.RawMessage, sig string) {
	a.msg.Content = append(a.msg.Content, Block{Type: BlockToolCall, ID: id, Name: name, Signature: sig, args: &ArgBuffer{}})
	i := len(a.msg.Content) - 1
	a.on(Event{Type: EventToolCallStart, Index: i, ID: id, Name: name})
	a.msg.Content[i].args.Write(args)
}

func (a *assembler) setUsage(u Usage) { a.usage, a.hasUse = u, true }

// finish completes the message. With err set (the stream failed or was
// cut), tool calls are left out — they cannot run without their whole
// arguments — so the transcript stays consistent.
func (a *assembler) finish(stop string, err error) Message {
	m := a.msg
	m.Timestamp = time.Now().UnixMilli()
	if a.hasUse {
		u := a.usage
		if a.price != nil {
			u.Cost = a.price.CostOf(u)
		}
		m.Usage = &u
	}
	if err == nil && !a.done {
		err = ErrIncomplete
	}
	out := m.Content[:0]
	for i := range m.Content {
		b := m.Content[i]
		switch {
		case b.Type == BlockText && b.Text == "" && b.Signature == "":
			continue
		case b.Type == BlockToolCall && err != nil:
			continue
		case b.Type == BlockToolCall:
			if b.ID == "" { // some local servers issue no ids
				b.ID = randid.New("call_", 8)
			}
			raw := b.args.Bytes()
			args, repair, ok := RepairArguments(raw)
			if ok {
				b.Arguments, b.Repair = args, repair
			} else {
				b.Arguments, b.InvalidArguments = json.RawMessage("{}"), string(raw)
			}
			b.args = nil
			call := &Block{Type: BlockToolCall, ID: b.ID, Name: b.Name, Arguments: b.Arguments}
			a.on(Event{Type: EventToolCallEnd, Index: len(out), ID: b.ID, Name: b.Name, Arguments: b.Arguments, ToolCall: call})
		}
		out = append(out, b)
	}
	m.Content = out
	switch {
	case err != nil:
		m.StopReason, m.ErrorMessage = "error", err.Error()
		if errors.Is(err, errAborted) {
			m.StopReason = "aborted"
		}
	case len(m.ToolCalls()) > 0:
		m.StopReason = "toolUse"
	default:
		m.StopReason = stop
	}
	if m.StopReason == "" {
		m.StopReason = "stop"
	}
	return m
}

// ErrIncomplete is the error of a stream that ended before the provider
// said the response was complete.
var ErrIncomplete = errors.New("the response stream ended before the response was complete (connection cut?)")

// errAborted marks an error caused by the caller's context.
var errAborted = errors.New("aborted")

type abortError struct{ err error }

func (e abortError) Error() string        { return "aborted: " + e.err.Error() }
func (e abortError) Unwrap() []error      { return []error{errAborted, e.err} }
func (e abortError) Is(target error) bool { return target == errAborted }

// sseReader reads server-sent events.
type sseReader struct {
	r *bufio.Reader
}

// sseBuffers are the readers of response streams, 64 KB each, kept from
// one response to the next: a turn of the agent loop allocated one, a
// quarter of what it allocated (see bench/HISTORY.md, "The agent loop's
// messages, encoded once").
var sseBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// newSSE returns a reader of r's events; release gives its buffer back.
func newSSE(r io.Reader) *sseReader {
	br := sseBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &sseReader{r: br}
}

// release gives the reader's buffer back; the events it returned stay
// valid (each is a copy).
func (s *sseReader) release() {
	s.r.Reset(nil)
	sseBuffers.Put(s.r)
	s.r = nil
}

// next returns the next event's name and data; io.EOF at the end.
func (s *sseReader) next() (event string, data []byte, err error) {
	var lines [][]byte
	for {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = s.r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && len(line) == 0 {
			if err == io.EOF && (event != "" || len(lines) > 0) {
				return event, joinLines(lines), nil
			}
			return "", nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if event == "" && len(lines) == 0 {
				continue
			}
			return event, joinLines(lines), nil
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("event:")):
			event = string(bytes.TrimSpace(line[6:]))
		case bytes.HasPrefix(line, []byte("data:")):
			d := line[5:]
			if len(d) > 0 && d[0] == ' ' {
				d = d[1:]
			}
			lines = append(lines, append([]byte(nil), d...))
		}
		if err != nil { // a last line without a newline
			return event, joinLines(lines), nil
		}
	}
}

// joinLines joins an event's data lines (one, nearly always, which is
// its own copy already).
func joinLines(lines [][]byte) []byte {
	if len(lines) == 1 {
		return lines[0]
	}
	return bytes.Join(lines, []byte("\n"))
}

// decode unmarshals an event's data, saying which event it was on failure.
func decode(event string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("malformed %s event from the provider: %v: %.200s", cmpOr(event, "stream"), err, data)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
