// Package invoke runs tool calls through one governed pipeline: the name is
// resolved, events are emitted, and the call passes through a chain of steps
// — small middlewares in the style of net/http — before the tool executes.
//
//	r := invoke.New(reg, &tool.Context{WorkspaceDir: dir})
//	msg := r.Run(ctx, tool.Call{ID: "call_1", Name: "read", Arguments: []byte(`{"path":"go.mod"}`)})
//
// Errors a model should see are results, never Go errors or panics.
package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// Request is one call as it moves through the pipeline. Steps may read and
// change it; the execute step hands Call, Context and Update to the tool.
type Request struct {
	// Call is the call. After the arguments step, Call.Arguments is the
	// JSON text of an object (not yet checked to be well formed: the
	// validate step does that).
	Call tool.Call
	// Tool is the resolved tool.
	Tool *tool.Tool
	// Context says who and where the call runs for.
	Context *tool.Context
	// Update reports partial results as tool_execution_update events.
	Update tool.UpdateFunc
	// Log is the runner's logger.
	Log *slog.Logger

	resolved *resolvedTool
	args     map[string]any // decoded Call.Arguments, once needed
}

// Args returns the arguments decoded, numbers as json.Number. They are
// decoded from Call.Arguments on first use; steps that only pass arguments
// along never pay for it. Changing the map has no effect: use SetArgs.
func (req *Request) Args() (map[string]any, error) {
	if req.args != nil {
		return req.args, nil
	}
	args, err := decodeObject(req.Call.Arguments)
	if err != nil {
		return nil, err
	}
	req.args = args
	return args, nil
}

// SetArgs replaces the arguments; Call.Arguments becomes their JSON.
func (req *Request) SetArgs(args map[string]any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encoding arguments: %w", err)
	}
	req.args, req.Call.Arguments = args, raw
	return nil
}

// Validator returns the compiled validator of the request's tool, compiled
// once and cached for as long as the registry does not change.
func (req *Request) Validator() (*schema.Validator, error) {
	if req.resolved == nil || &req.resolved.tool != req.Tool {
		return schema.Compile(req.Tool.Parameters)
	}
	return req.resolved.validator()
}

// Handler runs a request and returns its result.
type Handler func(ctx context.Context, req *Request) tool.Result

// Middleware wraps a Handler with one step of the pipeline.
type Middleware func(next Handler) Handler

// Step is a named middleware; the names let an embedding program insert,
// replace or remove steps (see WithSteps).
type Step struct {
	Name string
	Wrap Middleware
}

// Runner runs calls against a registry for one tool context.
type Runner struct {
	reg     *registry.Registry
	tc      *tool.Context
	selects []registry.Option
	log     *slog.Logger
	events  Bus
	steps   []Step
	chain   Handler
	cache   atomic.Pointer[toolCache]
}

// Option configures a Runner.
type Option func(*Runner)

// WithSelection limits the tools the runner will run to those the registry
// options select (profile, section, include, exclude). Other tools are
// unknown to its callers.
func WithSelection(opts ...registry.Option) Option {
	return func(r *Runner) { r.selects = append(r.selects, opts...) }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Runner) { r.log = l } }

// WithSteps edits the list of steps: edit receives the default steps in order
// and returns the steps to use.
func WithSteps(edit func([]Step) []Step) Option {
	return func(r *Runner) { r.steps = edit(r.steps) }
}

// Use appends middlewares after the default steps, just before the tool
// executes.
func Use(mws ...Middleware) Option {
	return func(r *Runner) {
		for i, mw := range mws {
			r.steps = append(r.steps, Step{Name: fmt.Sprintf("use%d", i), Wrap: mw})
		}
	}
}

// DefaultSteps returns the steps a Runner starts with, in order:
// "arguments" (accept an object, a JSON string holding one, or nothing) and
// "validate" (against the tool's full schema).
func DefaultSteps() []Step {
	return []Step{
		{Name: "arguments", Wrap: Arguments},
		{Name: "validate", Wrap: Validate},
	}
}

// New returns a runner for the tools of reg, run for tc (which may be nil).
func New(reg *registry.Registry, tc *tool.Context, opts ...Option) *Runner {
	if tc == nil {
		tc = &tool.Context{}
	}
	r := &Runner{reg: reg, tc: tc, log: slog.Default(), steps: DefaultSteps()}
	for _, o := range opts {
		o(r)
	}
	var h Handler = Execute
	for i := len(r.steps) - 1; i >= 0; i-- {
		h = r.steps[i].Wrap(h)
	}
	r.chain = h
	return r
}

// Steps returns the runner's steps in order.
func (r *Runner) Steps() []Step { return append([]Step(nil), r.steps...) }

// Subscribe returns a subscription to the runner's events; see Bus.Subscribe.
func (r *Runner) Subscribe(buffer int) *Subscription { return r.events.Subscribe(buffer) }

// Tools returns the tools the runner offers, resolved for its context, in
// resolution order. Tools whose factories fail are left out and reported to
// onError.
func (r *Runner) Tools(onError registry.ErrorFunc) []tool.Tool {
	return r.reg.ResolveAll(r.tc, onError, r.selects...)
}

// Run runs one call and returns its result message. It never panics and
// never returns without a message.
func (r *Runner) Run(ctx context.Context, call tool.Call) (msg tool.ResultMessage) {
	name := strings.TrimSpace(call.Name)
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("tool pipeline panicked", "tool", name, "call", call.ID, "panic", p, "stack", string(debug.Stack()))
			res := tool.Envelope{Status: "error", Tool: name, Error: fmt.Sprintf("internal error in the tool pipeline: %v", p)}.Result()
			msg = message(call.ID, name, res)
		}
	}()
	rt, res := r.resolve(name)
	if rt != nil {
		name = rt.tool.Name
	}
	req := &Request{Call: call, Context: r.tc, Update: noUpdate, Log: r.log}
	if r.events.Active() {
		r.events.Publish(Event{Type: EventStart, ToolCallID: call.ID, ToolName: name, Args: rawArgs(call.Arguments)})
		req.Update = func(partial tool.Result) {
			r.events.Publish(Event{Type: EventUpdate, ToolCallID: call.ID, ToolName: name, Args: req.Call.Arguments, PartialResult: &partial})
		}
	}
	if rt != nil {
		req.Tool, req.resolved = &rt.tool, rt
		res = r.chain(ctx, req)
	}
	res = complete(res)
	if r.events.Active() {
		r.events.Publish(Event{Type: EventEnd, ToolCallID: call.ID, ToolName: name, Result: &res, IsError: res.IsError})
	}
	return message(call.ID, name, res)
}

func noUpdate(tool.Result) {}

// RunBatch runs the calls of one model turn concurrently and returns their
// result messages in the order of calls. A failing or panicking call does not
// affect the others; cancelling ctx cancels them all.
func (r *Runner) RunBatch(ctx context.Context, calls []tool.Call) []tool.ResultMessage {
	out := make([]tool.ResultMessage, len(calls))
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { out[i] = r.Run(ctx, calls[i]) })
	}
	wg.Wait()
	return out
}

func message(id, name string, res tool.Result) tool.ResultMessage {
	return tool.ResultMessage{
		Role:       tool.RoleToolResult,
		ToolCallID: id,
		ToolName:   name,
		Content:    res.Content,
		Details:    res.Details,
		IsError:    res.IsError,
		Timestamp:  time.Now().UnixMilli(),
	}
}

// complete makes sure a result has at least one content block.
func complete(res tool.Result) tool.Result {
	if len(res.Content) == 0 {
		text := "(no output)"
		if res.IsError {
			text = "(the tool failed without a message)"
		}
		res.Content = []tool.Content{{Type: tool.TextContent, Text: text}}
	}
	return res
}

// Execute is the innermost handler: it runs the tool. A panic becomes an
// error result (the stack goes to the log, not to the model); a Go error
// becomes an error envelope.
func Execute(ctx context.Context, req *Request) (res tool.Result) {
	defer func() {
		if p := recover(); p != nil {
			req.logger().Error("tool panicked", "tool", req.Tool.Name, "call", req.Call.ID, "panic", p, "stack", string(debug.Stack()))
			res = tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: fmt.Sprintf("the tool crashed (panic: %v); this is a bug in the tool, not in your call", p)}.Result()
		}
	}()
	res, err := req.Tool.Execute(ctx, req.Call, req.Context, req.Update)
	if err != nil {
		return ErrorResult(req.Tool.Name, err)
	}
	return res
}

// ErrorResult turns a Go error from a tool into the error envelope a model
// sees: {"status":"error","tool":NAME,"error":MESSAGE}.
func ErrorResult(name string, err error) tool.Result {
	return tool.Envelope{Status: "error", Tool: name, Error: err.Error()}.Result()
}

func (req *Request) logger() *slog.Logger {
	if req.Log != nil {
		return req.Log
	}
	return slog.Default()
}
