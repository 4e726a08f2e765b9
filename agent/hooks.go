package agent

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
)

// Hooks are an agent's lifecycle hooks, beside the runner's tool hooks: each
// field is optional, one per event. Every hook gets the event's context
// and what happened; those whose event can decide return a decision. A
// hook that panics fails as one that returns an error does. What each hook
// did is reported as an EventHook.
type Hooks struct {
	// SessionStart runs before the first run of the agent (or the first
	// after EndSession); its Context is added to the transcript.
	SessionStart func(ctx context.Context, e SessionStart) (SessionStartDecision, error)
	// SessionEnd runs at EndSession.
	SessionEnd func(ctx context.Context, e SessionEnd) error
	// UserPromptSubmit sees a run's prompt before the model does: it may
	// block it or add context. An error blocks it (fail closed).
	UserPromptSubmit func(ctx context.Context, e UserPromptSubmit) (PromptDecision, error)
	// Stop runs when the model would stop: it may ask the loop to go on,
	// with a reason the model reads, at most MaxStopContinues times a run.
	// An error lets the run stop.
	Stop func(ctx context.Context, e Stop) (StopDecision, error)
	// PreCompact runs before the transcript is compacted (RunPreCompact).
	PreCompact func(ctx context.Context, e PreCompact) error
	// SubagentStart and SubagentStop run when a sub-agent of the agent's
	// session starts and when its run has ended (RunSubagentStart,
	// RunSubagentStop; the session host calls them).
	SubagentStart func(ctx context.Context, e SubagentStart) error
	SubagentStop  func(ctx context.Context, e SubagentStop) error
	// PermissionRequest decides about a call of the agent's that needs a
	// person's approval, before the person is asked (see
	// invoke.PermissionHook): allow, deny or ask, with updated input. An
	// error blocks the call.
	PermissionRequest invoke.PermissionHook
}

// The hook events, as EventHook names them.
const (
	HookSessionStart      = "session_start"
	HookSessionEnd        = "session_end"
	HookUserPromptSubmit  = "user_prompt_submit"
	HookStop              = "stop"
	HookPreCompact        = "pre_compact"
	HookSubagentStart     = "subagent_start"
	HookSubagentStop      = "subagent_stop"
	HookPermissionRequest = "permission_request"
)

// MaxStopContinues bounds how many times a Stop hook may make one run go
// on, so that a hook cannot keep a run going forever.
const MaxStopContinues = 3

// SessionStart is what a session_start hook sees.
type SessionStart struct {
	// Session is the session key of the agent's runner (may be "").
	Session string `json:"session"`
	// Source is "startup" for a new session, "resume" when the first run
	// continues a history.
	Source string `json:"source"`
}

// SessionStartDecision is a session_start hook's answer.
type SessionStartDecision struct {
	// Context, when set, is added to the transcript as a user message
	// before the first prompt.
	Context string `json:"context,omitempty"`
}

// SessionEnd is what a session_end hook sees.
type SessionEnd struct {
	Session string `json:"session"`
	// Reason says why the session ended ("exit", "done", "error", …).
	Reason string `json:"reason"`
}

// UserPromptSubmit is what a user_prompt_submit hook sees.
type UserPromptSubmit struct {
	Session string `json:"session"`
	// Prompt is the text of the run's prompt messages.
	Prompt string `json:"prompt"`
}

// PromptDecision is a user_prompt_submit hook's answer.
type PromptDecision struct {
	// Block refuses the prompt: the run ends before any model call with a
	// *HookBlocked error; Reason says why.
	Block  bool   `json:"block,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Context, when set, is added after the prompt as a user message.
	Context string `json:"context,omitempty"`
}

// Stop is what a stop hook sees.
type Stop struct {
	Session string `json:"session"`
	// Turn is the turn the model would stop at; Continues counts how many
	// times hooks made this run go on already.
	Turn      int `json:"turn"`
	Continues int `json:"continues"`
	// Answer is the text of the model's last message.
	Answer string `json:"answer"`
}

// StopDecision is a stop hook's answer.
type StopDecision struct {
	// Continue makes the loop go on; Reason is given to the model as a
	// user message (required with Continue).
	Continue bool   `json:"continue,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// PreCompact is what a pre_compact hook sees.
type PreCompact struct {
	Session string `json:"session"`
	// Trigger is "auto" (the conversation neared the model's window) or
	// "manual".
	Trigger string `json:"trigger"`
	// Messages are the messages about to be compacted.
	Messages []llm.Message `json:"messages"`
	// Tokens is the transcript's estimated size in tokens.
	Tokens int `json:"tokens"`
}

// SubagentStart is what a subagent_start hook sees.
type SubagentStart struct {
	// Session is the parent's session key, Child the sub-agent's.
	Session string `json:"session"`
	Child   string `json:"child"`
	Agent   string `json:"agent"`
	Label   string `json:"label,omitempty"`
	Task    string `json:"task"`
}

// SubagentStop is what a subagent_stop hook sees.
type SubagentStop struct {
	Session string `json:"session"`
	Child   string `json:"child"`
	Agent   string `json:"agent"`
	Label   string `json:"label,omitempty"`
	// Status is how its run ended (done, failed, aborted); Answer its
	// last answer.
	Status string `json:"status"`
	Answer string `json:"answer"`
}

// HookBlocked is the error of a run whose prompt a user_prompt_submit hook
// refused.
type HookBlocked struct {
	Event  string
	Reason string
}

func (e *HookBlocked) Error() string {
	return fmt.Sprintf("the %s hook blocked the prompt: %s", e.Event, e.Reason)
}

// callHook runs fn, turning a panic into an error.
func callHook[E, D any](ctx context.Context, fn func(context.Context, E) (D, error), e E) (d D, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(ctx, e)
}

// observe runs an observing hook (nil: none) and reports it.
func observe[E any](a *Agent, ctx context.Context, name string, fn func(context.Context, E) error, e E) {
	if fn == nil {
		return
	}
	_, err := callHook(ctx, func(ctx context.Context, e E) (struct{}, error) { return struct{}{}, fn(ctx, e) }, e)
	a.hookEvent(name, "observe", "", err)
}

// hookEvent reports what a hook did.
func (a *Agent) hookEvent(name, decision, reason string, err error) {
	e := Event{Type: EventHook, Hook: name, Decision: decision, Reason: reason}
	if err != nil {
		e.Decision, e.Error = "error", err.Error()
	}
	a.emit(e)
}

// session is the session key of the agent's runner.
func (a *Agent) session() string {
	if tc := a.Runner.Context(); tc != nil {
		return tc.SessionKey
	}
	return ""
}

// RunPreCompact runs the pre_compact hook before the loop compacts the
// transcript; its error is reported and does not stop the compaction.
func (a *Agent) RunPreCompact(ctx context.Context, e PreCompact) {
	e.Session = a.session()
	observe(a, ctx, HookPreCompact, a.Hooks.PreCompact, e)
}

// RunSubagentStart runs the subagent_start hook of the agent whose session
// spawned a sub-agent.
func (a *Agent) RunSubagentStart(ctx context.Context, e SubagentStart) {
	observe(a, ctx, HookSubagentStart, a.Hooks.SubagentStart, e)
}

// RunSubagentStop runs the subagent_stop hook of the agent whose session
// spawned a sub-agent, once the sub-agent's run has ended.
func (a *Agent) RunSubagentStop(ctx context.Context, e SubagentStop) {
	observe(a, ctx, HookSubagentStop, a.Hooks.SubagentStop, e)
}

// startSession runs the session_start hook before the agent's first run
// and returns the context it adds (nil: none).
func (a *Agent) startSession(ctx context.Context, resume bool) []llm.Message {
	a.mu.Lock()
	started := a.started
	a.started = true
	a.mu.Unlock()
	if started || a.Hooks.SessionStart == nil {
		return nil
	}
	e := SessionStart{Session: a.session(), Source: "startup"}
	if resume {
		e.Source = "resume"
	}
	d, err := callHook(ctx, a.Hooks.SessionStart, e)
	a.hookEvent(HookSessionStart, "observe", "", err)
	if err != nil || d.Context == "" {
		return nil
	}
	return []llm.Message{llm.UserText(d.Context)}
}

// EndSession ends the agent's session: its session_end hook runs, with
// reason, when a run started it; the next run starts a new session.
func (a *Agent) EndSession(ctx context.Context, reason string) {
	a.mu.Lock()
	started := a.started
	a.started = false
	a.mu.Unlock()
	if started {
		observe(a, ctx, HookSessionEnd, a.Hooks.SessionEnd, SessionEnd{Session: a.session(), Reason: reason})
	}
}

// admit passes msgs — the prompt, or steering messages and follow-ups
// that came during a run — through the user_prompt_submit hook, and
// returns them with the context it adds; a message the hook blocks ends
// the run (*HookBlocked), wherever it came from.
func (a *Agent) admit(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
	extra, err := a.submitPrompt(ctx, msgs)
	if err != nil || len(extra) == 0 {
		return msgs, err
	}
	return append(slices.Clone(msgs), extra...), nil
}

// submitPrompt runs the user_prompt_submit hook on the prompt and returns
// the context it adds; a block or a failing hook is a *HookBlocked error.
func (a *Agent) submitPrompt(ctx context.Context, prompt []llm.Message) ([]llm.Message, error) {
	if a.Hooks.UserPromptSubmit == nil || len(prompt) == 0 {
		return nil, nil
	}
	var text string
	for i, m := range prompt {
		if i > 0 {
			text += "\n"
		}
		text += m.Text()
	}
	d, err := callHook(ctx, a.Hooks.UserPromptSubmit, UserPromptSubmit{Session: a.session(), Prompt: text})
	switch {
	case err != nil:
		a.hookEvent(HookUserPromptSubmit, "", "", err)
		return nil, &HookBlocked{Event: HookUserPromptSubmit, Reason: "the hook failed"}
	case d.Block:
		reason := d.Reason
		if reason == "" {
			reason = "no reason given"
		}
		a.hookEvent(HookUserPromptSubmit, "block", reason, nil)
		return nil, &HookBlocked{Event: HookUserPromptSubmit, Reason: reason}
	case d.Context != "":
		a.hookEvent(HookUserPromptSubmit, "context", "", nil)
		return []llm.Message{llm.UserText(d.Context)}, nil
	}
	a.hookEvent(HookUserPromptSubmit, "allow", "", nil)
	return nil, nil
}

// stopHook asks the stop hook whether the run that would stop after msg
// goes on, and returns the message that makes it (nil: it stops).
func (a *Agent) stopHook(ctx context.Context, turn, continues int, msg llm.Message) *llm.Message {
	if a.Hooks.Stop == nil {
		return nil
	}
	if continues >= MaxStopContinues {
		a.hookEvent(HookStop, "limit", fmt.Sprintf("the stop hook made this run go on %d times, the limit", continues), nil)
		return nil
	}
	d, err := callHook(ctx, a.Hooks.Stop, Stop{Session: a.session(), Turn: turn, Continues: continues, Answer: msg.Text()})
	if err != nil || !d.Continue || d.Reason == "" {
		decision := "stop"
		if d.Continue {
			err = fmt.Errorf("the stop hook asked to continue without a reason for the model")
		}
		a.hookEvent(HookStop, decision, "", err)
		return nil
	}
	a.hookEvent(HookStop, "continue", d.Reason, nil)
	m := llm.UserText(d.Reason)
	return &m
}
