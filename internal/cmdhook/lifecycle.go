package cmdhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/invoke"
)

// Events are the lifecycle hooks toolbelt.yaml configures, by event. Their
// Tools and Priority are not used.
type Events struct {
	SessionStart, SessionEnd, UserPromptSubmit, Stop, PreCompact, SubagentStart, SubagentStop, PermissionRequest []Hook
}

// input is what a lifecycle hook reads: the event's payload with its
// name as "event".
func input(event string, payload any) (map[string]any, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	in := map[string]any{}
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	in["event"] = event
	return in, nil
}

// AgentHooks returns the agent hooks that run ev's hooks of every event
// but permission_request (InstallPermission puts those in the pipeline,
// where every call's confirmation reaches them). The hooks of an event run
// in order. What they may answer, as JSON on standard output or as an
// HTTP response:
//
//   - session_start: {"context": …}, added to the transcript.
//   - user_prompt_submit: {"decision": "block", "reason": …} or
//     {"context": …}; exit code 2 blocks with standard error as the reason.
//     A hook that fails blocks the prompt.
//   - stop: {"decision": "continue", "reason": …}; exit code 2 continues
//     with standard error as the reason.
//   - session_end, pre_compact, subagent_start, subagent_stop: nothing
//     (they observe).
func AgentHooks(ev Events, opts Options) agent.Hooks {
	var h agent.Hooks
	if len(ev.SessionStart) > 0 {
		h.SessionStart = func(ctx context.Context, e agent.SessionStart) (agent.SessionStartDecision, error) {
			var texts []string
			for _, hk := range ev.SessionStart {
				var a struct {
					Context string `json:"context"`
				}
				if _, err := hk.askEvent(ctx, opts.Dir, agent.HookSessionStart, e, &a); err != nil {
					return agent.SessionStartDecision{}, err
				}
				texts = appendText(texts, a.Context)
			}
			return agent.SessionStartDecision{Context: strings.Join(texts, "\n\n")}, nil
		}
	}
	if len(ev.UserPromptSubmit) > 0 {
		h.UserPromptSubmit = func(ctx context.Context, e agent.UserPromptSubmit) (agent.PromptDecision, error) {
			var texts []string
			for _, hk := range ev.UserPromptSubmit {
				var a struct {
					Decision, Reason, Context string
				}
				refused, err := hk.askEvent(ctx, opts.Dir, agent.HookUserPromptSubmit, e, &a)
				switch {
				case err != nil:
					return agent.PromptDecision{}, err
				case refused != "":
					return agent.PromptDecision{Block: true, Reason: refused}, nil
				case a.Decision == "block":
					return agent.PromptDecision{Block: true, Reason: a.Reason}, nil
				case a.Decision != "" && a.Decision != "allow":
					return agent.PromptDecision{}, fmt.Errorf("hook %s: unknown decision %q (use allow or block)", hk.name(), a.Decision)
				}
				texts = appendText(texts, a.Context)
			}
			return agent.PromptDecision{Context: strings.Join(texts, "\n\n")}, nil
		}
	}
	if len(ev.Stop) > 0 {
		h.Stop = func(ctx context.Context, e agent.Stop) (agent.StopDecision, error) {
			for _, hk := range ev.Stop {
				var a struct{ Decision, Reason string }
				reason, err := hk.askEvent(ctx, opts.Dir, agent.HookStop, e, &a)
				switch {
				case err != nil:
					return agent.StopDecision{}, err
				case reason != "":
					return agent.StopDecision{Continue: true, Reason: reason}, nil
				case a.Decision == "continue":
					return agent.StopDecision{Continue: true, Reason: a.Reason}, nil
				case a.Decision != "" && a.Decision != "stop":
					return agent.StopDecision{}, fmt.Errorf("hook %s: unknown decision %q (use stop or continue)", hk.name(), a.Decision)
				}
			}
			return agent.StopDecision{}, nil
		}
	}
	h.SessionEnd = observer[agent.SessionEnd](ev.SessionEnd, agent.HookSessionEnd, opts)
	h.PreCompact = observer[agent.PreCompact](ev.PreCompact, agent.HookPreCompact, opts)
	h.SubagentStart = observer[agent.SubagentStart](ev.SubagentStart, agent.HookSubagentStart, opts)
	h.SubagentStop = observer[agent.SubagentStop](ev.SubagentStop, agent.HookSubagentStop, opts)
	return h
}

// appendText adds text to texts unless it is blank.
func appendText(texts []string, text string) []string {
	if strings.TrimSpace(text) == "" {
		return texts
	}
	return append(texts, text)
}

// observer returns the hook of an observing event that runs hooks in
// order (nil when there are none); the first failure is its error.
func observer[E any](hooks []Hook, event string, opts Options) func(context.Context, E) error {
	if len(hooks) == 0 {
		return nil
	}
	return func(ctx context.Context, e E) error {
		var first error
		for _, hk := range hooks {
			if _, err := hk.askEvent(ctx, opts.Dir, event, e, nil); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
}

// PermissionInput is what a permission_request hook reads.
type PermissionInput struct {
	Event   string         `json:"event"` // "permission_request"
	CallID  string         `json:"callId"`
	Tool    string         `json:"tool"`
	Params  map[string]any `json:"params"`
	Risk    string         `json:"risk"`
	Reason  string         `json:"reason"`
	Context InputContext   `json:"context"`
}

// Permission returns the permission_request hook that runs h. It may answer
// {"decision": "allow"|"deny"|"ask", "reason": …, "params": {…}} (params,
// with allow, are the updated input); exit code 2 denies with standard
// error as the reason; empty output leaves the question to a person. A
// hook that fails blocks the call.
func Permission(h Hook, opts Options) invoke.PermissionHook {
	return func(ctx context.Context, req invoke.PermissionRequest) (invoke.PermissionDecision, error) {
		id := req.Caller
		in := PermissionInput{
			Event: agent.HookPermissionRequest, CallID: req.CallID, Tool: req.Tool, Params: req.Params, Risk: req.Risk.String(), Reason: req.Reason,
			Context: InputContext{Workspace: id.Workspace, Session: id.SessionKey, Agent: id.AgentID, Channel: id.Channel, Owner: id.Owner},
		}
		if in.Params == nil {
			in.Params = map[string]any{}
		}
		var a struct {
			Decision, Reason string
			Params           map[string]any
		}
		reason, err := h.ask(ctx, opts.Dir, in, &a)
		switch {
		case err != nil:
			return invoke.PermissionDecision{}, err
		case reason != "":
			return invoke.PermissionDecision{Decision: invoke.PermissionDeny, Reason: reason}, nil
		}
		return invoke.PermissionDecision{Decision: a.Decision, Reason: a.Reason, Params: a.Params}, nil
	}
}

// InstallPermission adds the permission_request hooks to h.
func InstallPermission(h *invoke.Hooks, hooks []Hook, opts Options) {
	for _, hk := range hooks {
		h.OnPermission(hk.name(), Permission(hk, opts))
	}
}

// askEvent asks the hook about a lifecycle event: its payload, with the
// event's name (see ask).
func (h Hook) askEvent(ctx context.Context, dir, event string, payload, answer any) (refused string, err error) {
	in, err := input(event, payload)
	if err != nil {
		return "", fmt.Errorf("hook %s: encoding its input: %w", h.name(), err)
	}
	return h.ask(ctx, dir, in, answer)
}

// ask runs the hook with in and reads its answer into answer (when it
// printed one and answer is not nil). Exit code 2 returns the hook's
// standard error as refused (or a reason naming the hook); any other
// failure is an error.
func (h Hook) ask(ctx context.Context, dir string, in, answer any) (refused string, err error) {
	res, logs, err := h.run(ctx, dir, in)
	switch {
	case err != nil:
		return "", err
	case res.ExitCode == 2:
		return cmpText(strings.Join(logs, "\n"), "refused by the "+h.name()+" hook"), nil
	case res.ExitCode != 0:
		return "", h.failed(res, logs)
	}
	out := bytes.TrimSpace(res.Stdout)
	if len(out) == 0 || answer == nil {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(answer); err != nil {
		return "", fmt.Errorf("hook %s: its answer is not the JSON object its event takes: %v", h.name(), err)
	}
	return "", nil
}

// cmpText is text trimmed, or otherwise when that is empty.
func cmpText(text, otherwise string) string {
	if t := strings.TrimSpace(text); t != "" {
		return t
	}
	return otherwise
}
