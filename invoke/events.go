package invoke

import (
	"github.com/toolbelt/toolbelt/internal/fanout"
	"github.com/toolbelt/toolbelt/tool"
)

// EventType names an event.
type EventType string

// The events of a call. A call emits start, then any updates, hook decisions
// and a block, then end.
const (
	EventStart  EventType = "tool_execution_start"
	EventUpdate EventType = "tool_execution_update"
	EventEnd    EventType = "tool_execution_end"
	// EventHook reports a before_tool_call hook's decision.
	EventHook EventType = "hook_decision"
	// EventBlocked reports that the call was blocked, and why.
	EventBlocked EventType = "tool_blocked"
)

// The events of async tools' jobs are published with the job queue's own
// names, tool.JobSubmitted, tool.JobProgress, tool.JobCompleted and
// tool.JobFailed (tool:async:*): Job carries the job, ToolName its tool and
// ToolCallID the call that submitted it.

// Event is something that happened to a call.
type Event struct {
	Type       EventType `json:"type"`
	ToolCallID string    `json:"toolCallId"`
	ToolName   string    `json:"toolName"`
	// Args are the call's arguments: as received for start, as passed to the
	// tool for updates.
	Args any `json:"args,omitempty"`
	// PartialResult is set on updates.
	PartialResult *EventResult `json:"partialResult,omitempty"`
	// Result and IsError are set on end.
	Result  *EventResult `json:"result,omitempty"`
	IsError bool         `json:"isError,omitempty"`
	// Hook names the hook of a hook decision; Decision is what it decided
	// ("allow", "block", "params", "approval", "error").
	Hook     string `json:"hook,omitempty"`
	Decision string `json:"decision,omitempty"`
	// Reason says why a call was blocked or a hook decided as it did.
	Reason string `json:"reason,omitempty"`
	// Missed counts the events this subscriber lost, because its buffer was
	// full, since the event it received before this one.
	Missed uint64 `json:"missed,omitempty"`
	// Agent is the event of an agent loop that uses this runner (an
	// agent.Event: agent, turn and message events; tool events are the
	// runner's own), published with Runner.Publish.
	Agent any `json:"agent,omitempty"`
	// Job is the job of an async event.
	Job *tool.JobInfo `json:"job,omitempty"`
}

// EventResult is a result as events carry it: text cut to the event cap,
// images replaced by their size, and for errors the error text.
type EventResult struct {
	Content []EventContent `json:"content"`
	Details any            `json:"details,omitempty"`
	IsError bool           `json:"isError"`
	// Error is the error's text: its first non-empty line, at most 400
	// characters; set when IsError.
	Error string `json:"error,omitempty"`
}

// EventContent is a content block in an event: text, or the size of an
// image or audio.
type EventContent struct {
	Type     tool.ContentType `json:"type"`
	Text     string           `json:"text,omitempty"`
	MIMEType string           `json:"mimeType,omitempty"`
	Bytes    int              `json:"bytes,omitempty"`
	Omitted  bool             `json:"omitted,omitempty"`
}

// Bus delivers events to any number of subscribers. Publishing never blocks:
// each subscriber has a bounded buffer, and events that do not fit are
// counted as missed and reported to it.
type Bus struct{ b fanout.Bus[Event] }

// Subscription receives events from a Bus.
type Subscription struct{ s *fanout.Sub[Event] }

// DefaultBuffer is the buffer of a subscription made with a size of 0.
const DefaultBuffer = 1024

// Subscribe returns a subscription whose channel buffers up to buffer events
// (DefaultBuffer when buffer <= 0). Close it when done.
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Subscription{b.b.Subscribe(buffer, func(e Event, missed uint64) Event {
		e.Missed = missed
		return e
	})}
}

// Active reports whether anyone is subscribed, so publishers can skip
// building events nobody receives.
func (b *Bus) Active() bool { return b.b.Active() }

// Publish delivers e to every subscriber without blocking.
func (b *Bus) Publish(e Event) { b.b.Publish(e) }

// Events returns the channel events arrive on. It is closed by Close.
func (s *Subscription) Events() <-chan Event { return s.s.Events() }

// Missed returns how many events this subscriber has lost in all.
func (s *Subscription) Missed() uint64 { return s.s.Missed() }

// Close stops delivery and closes the channel.
func (s *Subscription) Close() { s.s.Close() }
