// Package feed is the live feed of calls: what every runner of a
// composition root publishes as its calls start, make progress, wait for
// approval in the console and finish, for watchers such as the console's
// calls page. Publishing never blocks a call, and costs nothing more than
// a check while nobody subscribes.
package feed

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/fanout"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// Kind says what happened to a call.
type Kind string

// The kinds of events. A call publishes Started, any Progress and Waiting,
// then Returned and Finished; a call of an unknown tool publishes
// Finished alone.
const (
	// Started: the call entered the pipeline (Tool, Args, Caller,
	// Workspace).
	Started Kind = "started"
	// Progress: the tool reported progress (Text).
	Progress Kind = "progress"
	// Waiting: the call waits for a decision in the console (PendingID,
	// URL).
	Waiting Kind = "waiting"
	// Finished: the call ended and its audit record is durable (Record).
	Finished Kind = "finished"
	// Returned: the call returned its result (Result).
	Returned Kind = "returned"
	// UserAction: a person acted on a session's canvas (pressed a button
	// of an A2UI surface): Tool "canvas", Caller's SessionKey the session,
	// URL the canvas, Text the message its agent gets. It belongs to no
	// call.
	UserAction Kind = "user_action"
)

// Event is something that happened to a call.
type Event struct {
	Kind   Kind      `json:"kind"`
	CallID string    `json:"callId"`
	Time   time.Time `json:"time"`
	// Tool, Args (secrets redacted, as the audit log keeps them), Caller
	// and Workspace (absolute) are set on Started.
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Caller    tool.Identity   `json:"caller"`
	Workspace string          `json:"workspace,omitempty"`
	// Text is a Progress event's text, cut to ProgressChars.
	Text string `json:"text,omitempty"`
	// PendingID and URL are set on Waiting: the id of the call's
	// store.PendingApproval, and the console's page to decide it on.
	PendingID string `json:"pendingId,omitempty"`
	URL       string `json:"url,omitempty"`
	// Record is a Finished event's audit record (its Seq and Hash unset).
	Record *audit.Record `json:"record,omitempty"`
	// Result is a Returned event's result, shaped as the runner's events
	// shape it (invoke.ShapeEventResult): each text cut to ResultChars,
	// images replaced by their size.
	Result *invoke.EventResult `json:"result,omitempty"`
	// Missed counts the events this subscriber lost, because its buffer
	// was full, since the one it received before this one.
	Missed uint64 `json:"missed,omitempty"`
}

// ProgressChars is the most characters of a Progress event's text.
const ProgressChars = 2000

// ResultChars is the most characters of each text of a Returned event's
// result.
const ResultChars = 64 << 10

// DefaultBuffer is the buffer of a subscription made with a size of 0.
const DefaultBuffer = 1024

// Hub delivers the events of every runner it is hooked into (Option and
// Auditor) to its subscribers. It is safe for concurrent use.
type Hub struct{ bus fanout.Bus[Event] }

// New returns a hub without subscribers.
func New() *Hub { return &Hub{} }

// Subscription receives the events of a Hub.
type Subscription struct{ s *fanout.Sub[Event] }

// Subscribe returns a subscription whose channel buffers up to buffer
// events (DefaultBuffer when buffer <= 0); events that do not fit are
// lost, and counted (Event.Missed). Close it when done.
func (h *Hub) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Subscription{h.bus.Subscribe(buffer, func(e Event, missed uint64) Event {
		e.Missed = missed
		return e
	})}
}

// Events returns the channel events arrive on. It is closed by Close.
func (s *Subscription) Events() <-chan Event { return s.s.Events() }

// Missed returns how many events this subscriber has lost in all.
func (s *Subscription) Missed() uint64 { return s.s.Missed() }

// Close stops delivery and closes the channel.
func (s *Subscription) Close() { s.s.Close() }

// Active reports whether anyone subscribes.
func (h *Hub) Active() bool { return h.bus.Active() }

// Publish delivers e, its Time set to now when zero, without blocking.
func (h *Hub) Publish(e Event) {
	if !h.bus.Active() {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	h.bus.Publish(e)
}

// Option adds the "feed" step to a runner, first of its steps: it
// publishes each call's Started event, its Progress and its Returned. With nobody
// subscribed it passes the call on untouched.
func (h *Hub) Option() invoke.Option {
	return invoke.WithSteps(func(steps []invoke.Step) []invoke.Step {
		return append([]invoke.Step{{Name: "feed", Wrap: h.step}}, steps...)
	})
}

func (h *Hub) step(next invoke.Handler) invoke.Handler {
	return func(ctx context.Context, req *invoke.Request) tool.Result {
		if !h.bus.Active() {
			return next(ctx, req)
		}
		h.Publish(Event{Kind: Started, CallID: req.Call.ID, Time: req.Started, Tool: req.Tool.Name,
			Args: audit.Redact(req.Call.Arguments), Caller: req.Context.Identity, Workspace: req.Scope.Workspace})
		update, id := req.Update, req.Call.ID
		req.Update = func(partial tool.Result) {
			update(partial)
			if h.bus.Active() {
				h.Publish(Event{Kind: Progress, CallID: id, Text: progressText(partial)})
			}
		}
		res := next(ctx, req)
		if h.bus.Active() {
			h.Publish(Event{Kind: Returned, CallID: id, Result: invoke.ShapeEventResult(res, ResultChars)})
		}
		return res
	}
}

// progressText is the text of a progress update, cut to ProgressChars.
func progressText(partial tool.Result) string {
	var parts []string
	for _, c := range partial.Content {
		if c.Type == tool.TextContent {
			parts = append(parts, c.Text)
		}
	}
	return textclip.Clip(strings.Join(parts, "\n"), ProgressChars)
}

// Auditor returns a wraps so that each call's Finished event is published
// once a has its record. A runner's auditor is where the record of every
// call, an unknown tool's too, is complete.
func (h *Hub) Auditor(a invoke.Auditor) invoke.Auditor { return auditor{a, h} }

type auditor struct {
	invoke.Auditor
	h *Hub
}

// Append appends r, then publishes it.
func (a auditor) Append(ctx context.Context, r audit.Record) error {
	err := a.Auditor.Append(ctx, r)
	if a.h.bus.Active() {
		r.Arguments = audit.Redact(r.Arguments)
		a.h.Publish(Event{Kind: Finished, CallID: r.CallID, Tool: r.Tool, Record: &r})
	}
	return err
}

// Durable says what a's Durable says (nil when a cannot tell), so the
// audit step refuses changes while records cannot be made durable just as
// it would without the feed.
func (a auditor) Durable() error {
	if d, ok := a.Auditor.(invoke.DurableAuditor); ok {
		return d.Durable()
	}
	return nil
}
