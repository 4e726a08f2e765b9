// Package agent runs the agent loop: it sends the transcript and the tools
// to a model ([llm.Client]), runs the tool calls the model makes through the
// [invoke.Runner] pipeline — concurrently, results in the model's order —
// hands the results back, and loops until the model answers without calls.
//
//	a := &agent.Agent{Client: c, Runner: r, System: "You are terse."}
//	transcript, err := a.Run(ctx, nil, llm.UserText("read a.txt"))
//
// What happens is reported as a small closed set of [Event]s: agent
// start/end, turn start/end, message start/update/end, tool execution
// start/update/end and compaction.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/provider"
	"github.com/toolbelt/toolbelt/tool"
)

// EventType names an agent event.
type EventType string

// The agent events.
const (
	EventAgentStart   EventType = "agent_start"
	EventAgentEnd     EventType = "agent_end"
	EventTurnStart    EventType = "turn_start"
	EventTurnEnd      EventType = "turn_end"
	EventMessageStart EventType = "message_start"
	// EventMessageUpdate carries a streaming delta of the assistant's message.
	EventMessageUpdate EventType = "message_update"
	EventMessageEnd    EventType = "message_end"
	EventToolStart     EventType = "tool_execution_start"
	EventToolUpdate    EventType = "tool_execution_update"
	EventToolEnd       EventType = "tool_execution_end"
	// EventHook reports what a lifecycle hook (Hooks) did: Hook names its
	// event, Decision what it decided ("error" with Error when it failed).
	EventHook EventType = "hook"
	// EventCompaction reports a compaction of the conversation (see
	// Compaction); its Message is the summary that now stands for the
	// earlier turns. A compaction that failed while the conversation still
	// fits the window is reported with Error and no Message, and the run
	// goes on.
	EventCompaction EventType = "compaction"
)

// Event is something that happened in the loop.
type Event struct {
	Type EventType `json:"type"`
	// Turn counts model turns, from 1.
	Turn int `json:"turn,omitempty"`
	// Message is the message of message events (for updates, as it is so
	// far), and the assistant's message for turn_end.
	Message *llm.Message `json:"message,omitempty"`
	// Delta is the streaming piece of a message_update.
	Delta *llm.Event `json:"assistantMessageEvent,omitempty"`
	// ToolCallID, ToolName and Args are a tool execution's; ToolCallID is
	// the id the model's provider gave the call.
	ToolCallID string `json:"toolCallId,omitempty"`
	// CallID is Toolbelt's own id of a tool execution: unique across
	// processes and time (tool.NewCallID), it names the call in the audit
	// log, the undo journal (toolbelt undo) and the kept outputs
	// (result_read). Providers' ids are not unique enough for that: local
	// servers number their calls call_0, call_1, … in every process.
	CallID   string          `json:"callId,omitempty"`
	ToolName string          `json:"toolName,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	// Result is a tool execution's result (partial for updates).
	Result  *llm.Message `json:"result,omitempty"`
	IsError bool         `json:"isError,omitempty"`
	// ToolResults are a turn's results (turn_end).
	ToolResults []llm.Message `json:"toolResults,omitempty"`
	// Messages are the messages the run added (agent_end).
	Messages []llm.Message `json:"messages,omitempty"`
	// Error says why the run stopped early (agent_end), or why a hook
	// failed (hook).
	Error string `json:"error,omitempty"`
	// Hook, Decision and Reason are a hook event's: the hook's event
	// (HookStop, …), what it decided and why.
	Hook     string `json:"hook,omitempty"`
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// MarshalJSON writes the event; a tool_execution_end with its isError
// even when false, as the seeds' event {toolCallId, toolName, result,
// isError} has it.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	if e.Type != EventToolEnd {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		IsError bool `json:"isError"`
	}{plain(e), e.IsError})
}

// DefaultMaxTurns bounds a run whose MaxTurns is 0.
const DefaultMaxTurns = 50

// ErrMaxTurns ends a run that reached its turn limit with the model still
// calling tools.
var ErrMaxTurns = errors.New("the model was still calling tools when the run reached its turn limit (--max-turns)")

// Agent is an agent loop's configuration. It is safe to Steer and FollowUp
// from other goroutines while Run runs; one Run at a time.
type Agent struct {
	// Client talks to the model.
	Client llm.Client
	// Runner runs the tool calls.
	Runner *invoke.Runner
	// Tools are the tools offered (default: the runner's).
	Tools []tool.Tool
	// Exporter writes the tools in the provider's format (default: one of
	// the agent's own).
	Exporter *provider.Exporter
	// System is the system prompt.
	System string
	// MaxTurns bounds the model turns (0: DefaultMaxTurns).
	MaxTurns int
	// Thinking is the thinking level of its model calls (llm.ThinkingOff …
	// llm.ThinkingHigh); empty: the provider's default.
	Thinking string
	// Compaction, when set, compacts the conversation as it nears the
	// model's context window.
	Compaction *Compaction
	// Repair, when set, repairs the arguments of calls that failed
	// validation twice in a row.
	Repair *Repair
	// OnEvent receives the events, one at a time (never concurrently).
	OnEvent func(Event)
	// Hooks are its lifecycle hooks.
	Hooks Hooks

	mu        sync.Mutex
	steering  []llm.Message
	followUps []llm.Message
	// interrupt stops the tools of the turn that runs them (nil between).
	interrupt context.CancelCauseFunc
	// started says a run started the session (session_start ran).
	started bool
	// invalidCalls counts, by tool, its calls in a row that failed
	// validation (Repair).
	invalidCalls map[string]int
	emitMu       sync.Mutex
}

// ErrSteered is why the tools of a turn were stopped: a steering message
// came while they ran. Their results say so ("Tool exec was cancelled:
// interrupted by a steering message …"), with the output they had.
var ErrSteered = errors.New("interrupted by a steering message, which follows")

// Steer queues a user message to deliver before the next model call. Tools
// of the current turn that still run are stopped (their results say they
// were interrupted, ErrSteered), as the seeds' steering does, so the
// message is not held up by them.
func (a *Agent) Steer(m llm.Message) {
	a.mu.Lock()
	a.steering = append(a.steering, m)
	if a.interrupt != nil {
		a.interrupt(ErrSteered)
	}
	a.mu.Unlock()
}

// interruptible returns the context of a turn's tools, which Steer cancels,
// and the function that ends it once they have run.
func (a *Agent) interruptible(ctx context.Context) (context.Context, func()) {
	tctx, cancel := context.WithCancelCause(ctx)
	a.mu.Lock()
	a.interrupt = cancel
	a.mu.Unlock()
	return tctx, func() {
		a.mu.Lock()
		a.interrupt = nil
		a.mu.Unlock()
		cancel(nil)
	}
}

// FollowUp queues a user message to deliver when the model would stop.
func (a *Agent) FollowUp(m llm.Message) {
	a.mu.Lock()
	a.followUps = append(a.followUps, m)
	a.mu.Unlock()
}

// Queued counts the steering and follow-up messages that wait.
func (a *Agent) Queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.steering) + len(a.followUps)
}

// Drain takes the messages that still wait — steering first, then
// follow-ups — for example those queued while a run was returning, so the
// caller can start another run with them.
func (a *Agent) Drain() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append(a.steering, a.followUps...)
	a.steering, a.followUps = nil, nil
	return out
}

func (a *Agent) take(q *[]llm.Message) []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := *q
	*q = nil
	return out
}

// emit reports an event to OnEvent and, except for tool events (the
// runner publishes its own), on the runner's bus.
func (a *Agent) emit(e Event) {
	if a.Runner.Active() && e.Type != EventToolStart && e.Type != EventToolUpdate && e.Type != EventToolEnd {
		a.Runner.Publish(invoke.Event{Type: invoke.EventType(e.Type), Agent: e})
	}
	if a.OnEvent == nil {
		return
	}
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	a.OnEvent(e)
}

// Run continues history with the prompt messages until the model answers
// without tool calls. It returns the whole transcript — history, prompt and
// every message of the run — also when it stops early: aborted (ctx), a
// provider error, or ErrMaxTurns. Every tool call in the transcript has its
// result.
func (a *Agent) Run(ctx context.Context, history []llm.Message, prompt ...llm.Message) (transcript []llm.Message, err error) {
	if a.Client == nil || a.Runner == nil {
		return history, errors.New("agent: Client and Runner must be set")
	}
	transcript = append([]llm.Message(nil), history...)
	start := len(history)
	a.emit(Event{Type: EventAgentStart})
	defer func() {
		e := Event{Type: EventAgentEnd, Messages: transcript[start:]}
		if err != nil {
			e.Error = err.Error()
		}
		a.emit(e)
	}()
	transcript = a.deliver(transcript, a.startSession(ctx, len(history) > 0))
	admitted, err := a.admit(ctx, prompt)
	if err != nil {
		return transcript, err
	}
	transcript = a.deliver(transcript, admitted)
	tools, version, err := a.exportTools()
	if err != nil {
		return transcript, err
	}
	maxTurns := a.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	continues := 0
	for turn := 1; ; turn++ {
		if turn > maxTurns {
			return transcript, ErrMaxTurns
		}
		steering, err := a.admit(ctx, a.take(&a.steering))
		if err != nil {
			return transcript, err
		}
		transcript = a.deliver(transcript, steering)
		if transcript, err = a.compact(ctx, turn, transcript); err != nil {
			return transcript, err
		}
		// A tool registered or removed since the tools were written (by a
		// tool of the last turn, an import, a directory tool) is in this
		// turn's request; otherwise the request carries the same bytes.
		if a.Tools == nil && a.Runner.Version() != version {
			if tools, version, err = a.exportTools(); err != nil {
				return transcript, err
			}
		}
		a.emit(Event{Type: EventTurnStart, Turn: turn})
		msg, err := a.stream(ctx, turn, transcript, tools)
		transcript = append(transcript, msg)
		if err != nil {
			a.emit(Event{Type: EventTurnEnd, Turn: turn, Message: &msg})
			return transcript, err
		}
		calls := msg.ToolCalls()
		results := a.runTools(ctx, turn, calls)
		transcript = append(transcript, results...)
		a.emit(Event{Type: EventTurnEnd, Turn: turn, Message: &msg, ToolResults: results})
		if err := ctx.Err(); err != nil {
			return transcript, fmt.Errorf("aborted: %w", err)
		}
		if len(calls) == 0 {
			more, err := a.admit(ctx, a.take(&a.followUps))
			if err != nil {
				return transcript, err
			}
			if len(more) == 0 && !a.pending() {
				on := a.stopHook(ctx, turn, continues, msg)
				if on == nil {
					return transcript, nil
				}
				continues++
				more = []llm.Message{*on}
			}
			transcript = a.deliver(transcript, more)
		}
	}
}

// deliver appends queued messages (steering, follow-ups) to the transcript,
// reporting each as a message, as the prompt's are.
func (a *Agent) deliver(transcript, msgs []llm.Message) []llm.Message {
	for i := range msgs {
		a.emit(Event{Type: EventMessageStart, Message: &msgs[i]})
		a.emit(Event{Type: EventMessageEnd, Message: &msgs[i]})
	}
	return append(transcript, msgs...)
}

// pending reports whether steering messages wait.
func (a *Agent) pending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.steering) > 0
}

// offered returns the tools offered to the model.
func (a *Agent) offered() []tool.Tool {
	if a.Tools != nil {
		return a.Tools
	}
	return a.Runner.Tools(nil)
}

// exportTools writes the tools for the client's target, and returns the
// runner's version they were resolved at. The exporter encodes a tool set
// once: the same tools again come back as the same bytes.
func (a *Agent) exportTools() (json.RawMessage, uint64, error) {
	version := a.Runner.Version()
	tools := a.offered()
	if len(tools) == 0 {
		return nil, version, nil
	}
	ex := a.Exporter
	if ex == nil {
		ex = provider.NewExporter(nil)
		a.Exporter = ex
	}
	out, err := ex.Export(tools, a.Client.Target())
	if err != nil {
		return nil, version, fmt.Errorf("writing the tools for %s: %w", a.Client.Provider().Name, err)
	}
	return out.Tools, version, nil
}

// stream makes one model call, reporting it as message events.
func (a *Agent) stream(ctx context.Context, turn int, transcript []llm.Message, tools json.RawMessage) (llm.Message, error) {
	partial := llm.Message{Role: llm.RoleAssistant, Provider: a.Client.Provider().Name, Model: a.Client.Model()}
	a.emit(Event{Type: EventMessageStart, Turn: turn, Message: &partial})
	var on func(llm.Event)
	if a.OnEvent != nil || a.Runner.Active() {
		on = func(e llm.Event) {
			a.emit(Event{Type: EventMessageUpdate, Turn: turn, Delta: &e})
		}
	}
	msg, err := a.Client.Stream(ctx, llm.Request{System: a.System, Messages: modelView(transcript), Tools: tools, Thinking: a.Thinking}, on)
	a.emit(Event{Type: EventMessageEnd, Turn: turn, Message: &msg})
	return msg, err
}

// runTools runs a turn's calls concurrently and returns their results in
// the calls' order. A steering message stops those still running.
func (a *Agent) runTools(ctx context.Context, turn int, calls []llm.Block) []llm.Message {
	if len(calls) == 0 {
		return nil
	}
	ctx, done := a.interruptible(ctx)
	defer done()
	from := invoke.FromProvider(a.Client.Provider().Name + "/" + a.Client.Model())
	out := make([]llm.Message, len(calls))
	ids := make([]string, len(calls))
	for i := range calls {
		ids[i] = tool.NewCallID("call")
	}
	run := func(i int) {
		c := calls[i]
		msg := a.runTool(ctx, turn, c, ids[i], from)
		out[i] = msg
		a.emit(Event{Type: EventToolEnd, Turn: turn, ToolCallID: c.ID, CallID: ids[i], ToolName: c.Name, Result: &msg, IsError: msg.IsError})
	}
	for i, c := range calls {
		a.emit(Event{Type: EventToolStart, Turn: turn, ToolCallID: c.ID, CallID: ids[i], ToolName: c.Name, Args: c.Arguments})
	}
	if len(calls) == 1 {
		run(0) // on this goroutine: its stack is already grown
	} else {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { run(i) })
		}
		wg.Wait()
	}
	for i := range out {
		a.emit(Event{Type: EventMessageStart, Turn: turn, Message: &out[i]})
		a.emit(Event{Type: EventMessageEnd, Turn: turn, Message: &out[i]})
	}
	return out
}

// runTool runs one call through the pipeline as call id (Toolbelt's own,
// which every record of it carries; the provider's id goes along as
// ProviderID). The result answers the call id exactly as the model issued
// it; errors the model can act on (unknown tool, invalid arguments) come in
// the error envelope, as the pipeline makes every error.
func (a *Agent) runTool(ctx context.Context, turn int, c llm.Block, id string, from invoke.CallOption) llm.Message {
	if c.InvalidArguments != "" {
		res := tool.Envelope{Status: "error", Tool: c.Name, Error: fmt.Sprintf(
			"the arguments are not valid JSON (%v) and could not be repaired; received: %s. Send the arguments as one JSON object.",
			invoke.SyntaxError([]byte(c.InvalidArguments)), textclip.Clip(c.InvalidArguments, 300))}.Result()
		return llm.ToolResult(tool.ResultMessage{Role: tool.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, Content: res.Content, IsError: true,
			Details: map[string]any{"invalidArguments": c.InvalidArguments}})
	}
	opts := []invoke.CallOption{from}
	if a.Hooks.PermissionRequest != nil {
		opts = append(opts, invoke.Permission(HookPermissionRequest, a.Hooks.PermissionRequest))
	}
	if a.OnEvent != nil {
		opts = append(opts, invoke.OnUpdate(func(r tool.Result) {
			p := llm.ToolResult(tool.ResultMessage{Role: tool.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, Content: r.Content, Details: r.Details})
			a.emit(Event{Type: EventToolUpdate, Turn: turn, ToolCallID: c.ID, CallID: id, ToolName: c.Name, Result: &p})
		}))
	}
	call := tool.Call{ID: id, ProviderID: c.ID, Name: c.Name, Arguments: c.Arguments}
	res := a.Runner.Run(ctx, call, opts...)
	res, id = a.repaired(ctx, call, res, func(fixed tool.Call) tool.ResultMessage { return a.Runner.Run(ctx, fixed, opts...) })
	res.ToolCallID = c.ID // exactly as issued, whatever the pipeline did
	if c.Repair != "" {
		res.Details = withDetail(res.Details, "argumentsRepaired", c.Repair)
	}
	msg := llm.ToolResult(res)
	msg.CallID = id
	return msg
}

// withDetail adds key to a result's details.
func withDetail(details any, key string, v any) any {
	out := map[string]any{}
	switch d := details.(type) {
	case nil:
	case map[string]any:
		maps.Copy(out, d)
	default:
		out["details"] = d
	}
	out[key] = v
	return out
}
