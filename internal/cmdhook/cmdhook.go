// Package cmdhook runs hooks written as commands, the way toolbelt.yaml
// configures them: before a call (may block it, change its arguments or ask
// a person) and after it (observes). A hook reads the call as one JSON
// object on standard input and answers with JSON on standard output, or
// with its exit code.
//
// Before hooks fail closed: a hook that cannot start, runs out of time,
// exits with a code other than 0 or 2, or answers something unreadable
// blocks the call. Exit code 2 blocks it with the hook's standard error as
// the reason. Hooks run like directory tools' handlers (see
// [shell.RunChild]): a scrubbed environment, a process group of their own
// killed at the time limit, bounded output.
package cmdhook

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// Hook is a command run around the calls it matches.
type Hook struct {
	// Name names the hook in events and logs (default: the command).
	Name string
	// Tools selects the calls: names, * globs and group: references;
	// empty selects every call. "write" selects every tool that changes
	// files (write, edit, apply_patch).
	Tools []string
	// Command runs with sh -c. A hook has a command or a URL.
	Command string
	// URL, with Secret ("whsec_…"), makes it an HTTP hook: its input is
	// POSTed as JSON, signed the Standard Webhooks way (package
	// stdwebhook), and the response body is its answer; a status other
	// than 2xx is a failure.
	URL, Secret string
	// Timeout bounds one run (default 10 s).
	Timeout time.Duration
	// Priority orders before hooks, higher first.
	Priority int
}

// DefaultTimeout bounds a hook's run when the hook does not say.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds what a hook may print.
const maxAnswer = 1 << 20

// Options say where hooks run.
type Options struct {
	// Dir is where hooks run, so that relative commands are found there:
	// the directory of toolbelt.yaml (default: the current directory).
	// Hooks learn the call's workspace from their input.
	Dir string
	// Registry, when set, gives after hooks the metadata of the tool, to
	// match group: references; without it they match names and globs only.
	Registry *registry.Registry
}

// BeforeInput is what a before hook reads.
type BeforeInput struct {
	Event  string         `json:"event"` // "before_tool_call"
	CallID string         `json:"callId"`
	Tool   string         `json:"tool"`
	Params map[string]any `json:"params"`
	// Files are the files the call touches, relative to the workspace
	// with links resolved; FilesListed says they include every file it
	// would change (see invoke.BeforeToolCall).
	Files       []string     `json:"files"`
	FilesListed bool         `json:"filesListed"`
	Risk        string       `json:"risk"`
	Source      string       `json:"source"`
	Context     InputContext `json:"context"`
}

// InputContext says who and where the call runs for.
type InputContext struct {
	Workspace string `json:"workspace,omitempty"`
	Session   string `json:"session,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Channel   string `json:"channel,omitempty"`
	Owner     bool   `json:"owner"`
}

// BeforeAnswer is what a before hook may print. Empty output with exit
// code 0 lets the call go on.
type BeforeAnswer struct {
	// Decision is "allow" (the default), "block" or "ask" (a person
	// decides).
	Decision string `json:"decision"`
	// Reason says why the call is blocked, or what to ask.
	Reason string `json:"reason"`
	// Params, when set, are merged over the call's arguments.
	Params map[string]any `json:"params"`
}

// AfterInput is what an after hook reads.
type AfterInput struct {
	Event      string              `json:"event"` // "after_tool_call"
	CallID     string              `json:"callId"`
	Tool       string              `json:"tool"`
	Params     map[string]any      `json:"params"`
	Result     *invoke.EventResult `json:"result,omitempty"`
	Error      string              `json:"error,omitempty"`
	DurationMs int64               `json:"durationMs"`
}

// PersistInput is what a tool_result_persist hook reads: the result
// message about to be stored.
type PersistInput struct {
	Event   string             `json:"event"` // "tool_result_persist"
	Message tool.ResultMessage `json:"message"`
}

// Install adds the hooks to h.
func Install(h *invoke.Hooks, before, after, persist []Hook, opts Options) {
	for _, hk := range before {
		h.OnBefore(hk.name(), hk.Priority, Before(hk, opts))
	}
	for _, hk := range after {
		h.OnAfter(hk.name(), After(hk, opts))
	}
	for _, hk := range persist {
		h.OnPersist(hk.name(), Persist(hk, opts))
	}
}

// Persist returns the tool_result_persist hook that runs h. The hook may
// print a result message to store instead ({"content": […], "details": …,
// "isError": …}; the ids, tool name and time are kept); printing nothing
// keeps the message. A failing hook keeps it too (and is logged).
func Persist(h Hook, opts Options) invoke.PersistHook {
	return func(ctx context.Context, msg tool.ResultMessage) (tool.ResultMessage, error) {
		meta := tool.Meta{ID: msg.ToolName}
		if opts.Registry != nil {
			if m, ok := opts.Registry.Meta(msg.ToolName); ok {
				meta = m
			}
		}
		if !h.matches(&meta) {
			return msg, nil
		}
		res, logs, err := h.run(ctx, opts.Dir, PersistInput{Event: "tool_result_persist", Message: msg})
		if err != nil {
			return msg, err
		}
		if res.ExitCode != 0 {
			return msg, h.failed(res, logs)
		}
		out := bytes.TrimSpace(res.Stdout)
		if len(out) == 0 {
			return msg, nil
		}
		var next struct {
			Content []tool.Content `json:"content"`
			Details any            `json:"details"`
			IsError bool           `json:"isError"`
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&next); err != nil {
			return msg, fmt.Errorf("hook %s: its answer is not {\"content\": […], \"details\": …, \"isError\": …}: %v", h.name(), err)
		}
		msg.Content, msg.Details, msg.IsError = next.Content, next.Details, next.IsError
		return msg, nil
	}
}

// name names the hook in events, logs and errors: its name, command, or
// URL without what may hold a token (stdwebhook.Display).
func (h Hook) name() string {
	if h.Name == "" && h.Command == "" && h.URL != "" {
		return stdwebhook.Display(h.URL)
	}
	return cmp.Or(h.Name, h.Command)
}

// matches reports whether the hook is for the tool m describes; a hook
// for write is also for every tool that changes files (edit, apply_patch),
// as a policy rule for write is.
func (h Hook) matches(m *tool.Meta) bool {
	if len(h.Tools) == 0 {
		return true
	}
	for _, ref := range h.Tools {
		if registry.Matches(m, ref) || catalog.NamesFileChanges(ref, m.ID) {
			return true
		}
		if ok, _ := path.Match(ref, m.ID); ok {
			return true
		}
	}
	return false
}

// Before returns the before_tool_call hook that runs h.
func Before(h Hook, opts Options) invoke.BeforeHook {
	return func(ctx context.Context, call invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		meta := call.Meta
		meta.ID = call.Tool
		if !h.matches(&meta) {
			return invoke.BeforeDecision{}, nil
		}
		in := BeforeInput{
			Event: "before_tool_call", CallID: call.CallID, Tool: call.Tool, Params: call.Params,
			Files: call.Files, FilesListed: call.FilesListed, Risk: call.Meta.Risk.String(), Source: string(call.Meta.Source),
		}
		if in.Files == nil {
			in.Files = []string{}
		}
		if tc := call.Context; tc != nil {
			in.Context = InputContext{Workspace: tc.Workspace, Session: tc.SessionKey, Agent: tc.AgentID, Channel: tc.Channel, Owner: tc.Owner}
		}
		if in.Params == nil {
			in.Params = map[string]any{}
		}
		res, logs, err := h.run(ctx, opts.Dir, in)
		if err != nil {
			return invoke.BeforeDecision{}, err
		}
		switch res.ExitCode {
		case 0:
		case 2:
			reason := strings.TrimSpace(strings.Join(logs, "\n"))
			if reason == "" {
				reason = "blocked by the " + h.name() + " hook"
			}
			return invoke.BeforeDecision{Block: true, Reason: reason}, nil
		default:
			return invoke.BeforeDecision{}, h.failed(res, logs)
		}
		out := bytes.TrimSpace(res.Stdout)
		if len(out) == 0 {
			return invoke.BeforeDecision{}, nil
		}
		var a BeforeAnswer
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return invoke.BeforeDecision{}, fmt.Errorf("hook %s: its answer is not {\"decision\": …, \"reason\": …, \"params\": …}: %v", h.name(), err)
		}
		switch a.Decision {
		case "", "allow":
			return invoke.BeforeDecision{Params: a.Params}, nil
		case "block":
			return invoke.BeforeDecision{Block: true, Reason: a.Reason}, nil
		case "ask":
			return invoke.BeforeDecision{RequireApproval: true, ApprovalMessage: a.Reason, Params: a.Params}, nil
		}
		return invoke.BeforeDecision{}, fmt.Errorf("hook %s: unknown decision %q (use allow, block or ask)", h.name(), a.Decision)
	}
}

// After returns the after_tool_call hook that runs h.
func After(h Hook, opts Options) invoke.AfterHook {
	return func(ctx context.Context, call invoke.AfterToolCall) error {
		meta := tool.Meta{ID: call.Tool}
		if opts.Registry != nil {
			if m, ok := opts.Registry.Meta(call.Tool); ok {
				meta = m
			}
		}
		if !h.matches(&meta) {
			return nil
		}
		in := AfterInput{
			Event: "after_tool_call", CallID: call.CallID, Tool: call.Tool, Params: call.Params,
			Result: call.Result, Error: call.Error, DurationMs: call.Duration.Milliseconds(),
		}
		if in.Params == nil {
			in.Params = map[string]any{}
		}
		res, logs, err := h.run(ctx, opts.Dir, in)
		if err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return h.failed(res, logs)
		}
		return nil
	}
}

// run runs the hook with in as its input: its command, with in on its
// standard input, or its HTTP request (see post), whose answer comes back
// as a command's standard output with exit code 0.
func (h Hook) run(ctx context.Context, dir string, in any) (shell.ChildResult, []string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return shell.ChildResult{}, nil, fmt.Errorf("hook %s: encoding its input: %w", h.name(), err)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if h.URL != "" {
		out, err := h.post(ctx, b)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return shell.ChildResult{}, nil, fmt.Errorf("hook %s ran out of time (%s) and was stopped", h.name(), timeout)
		}
		return shell.ChildResult{Stdout: out}, nil, err
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return shell.ChildResult{}, nil, err
		}
	}
	var mu sync.Mutex
	var logs []string
	res, err := shell.RunChild(ctx, shell.Child{
		Path: "/bin/sh", Args: []string{"/bin/sh", "-c", h.Command}, Dir: dir,
		Env:   shell.ScrubbedEnv(nil, nil),
		Stdin: b, MaxStdout: maxAnswer, KillGrace: time.Second,
		Stderr: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			if len(logs) < 20 {
				logs = append(logs, line)
			}
		},
	})
	if err != nil {
		return res, nil, fmt.Errorf("hook %s could not start: %w", h.name(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case res.Stopped && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return res, logs, fmt.Errorf("hook %s ran out of time (%s) and was stopped", h.name(), timeout)
	case res.Stopped:
		return res, logs, fmt.Errorf("hook %s was stopped: %w", h.name(), context.Cause(ctx))
	case res.StdoutOverflow:
		return res, logs, fmt.Errorf("hook %s printed more than %d bytes", h.name(), maxAnswer)
	}
	return res, logs, nil
}

// failed is the error of a hook that exited with a code other than 0 or 2.
func (h Hook) failed(res shell.ChildResult, logs []string) error {
	how := fmt.Sprintf("exited with code %d", res.ExitCode)
	if res.ExitCode == -1 {
		how = "was killed by " + shell.SignalName(res.Signal)
	}
	msg := fmt.Sprintf("hook %s %s", h.name(), how)
	if len(logs) > 0 {
		msg += ": " + strings.Join(logs, " | ")
	}
	return errors.New(msg)
}
