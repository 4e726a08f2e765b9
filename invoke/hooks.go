package invoke

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Hooks holds the hooks a runner runs around calls. It is safe for
// concurrent use; hooks may be added at any time and apply to calls that
// start afterwards.
type Hooks struct {
	mu      sync.RWMutex
	before  []beforeEntry
	after   []afterEntry
	persist []persistEntry
	// permission are the permission_request hooks (permission.go).
	permission []permissionEntry
}

// NewHooks returns an empty set of hooks.
func NewHooks() *Hooks { return &Hooks{} }

// BeforeToolCall is what a before_tool_call hook sees.
type BeforeToolCall struct {
	CallID string
	Tool   string
	Meta   tool.Meta
	// Params are the call's original parameters (a copy per hook).
	Params map[string]any
	// Files are the files the call touches: the paths it names and the
	// files it would change, relative to the workspace, cleaned, links
	// resolved. FilesListed says they include every file it would change
	// (its tool is read-only, or lists its changes: write, edit,
	// apply_patch); when it is false — exec, a tool that cannot say — a
	// hook that guards files cannot tell from Files alone.
	Files       []string
	FilesListed bool
	Context     *tool.Context
}

// BeforeDecision is a before_tool_call hook's answer. The zero value lets the
// call go on unchanged.
type BeforeDecision struct {
	// Block stops the call; Reason says why (the model sees it).
	Block  bool
	Reason string
	// Params, when set, are merged shallowly over the original parameters;
	// the last hook to give them wins.
	Params map[string]any
	// RequireApproval asks a person before the call runs; the first hook to
	// ask wins and freezes the parameters for the hooks after it.
	RequireApproval bool
	ApprovalMessage string
}

// BeforeHook decides about a call before it runs. An error or a panic blocks
// the call (fail closed).
type BeforeHook func(ctx context.Context, call BeforeToolCall) (BeforeDecision, error)

// AfterToolCall is what an after_tool_call hook sees.
type AfterToolCall struct {
	CallID string
	Tool   string
	// Params are the parameters the tool ran with.
	Params map[string]any
	// Result is the result as shaped for events.
	Result *EventResult
	// Error is the error text when the call failed.
	Error    string
	Duration time.Duration
}

// AfterHook observes a finished call. Its error is logged and changes
// nothing.
type AfterHook func(ctx context.Context, call AfterToolCall) error

// PersistHook may replace the result message that is stored (never the one
// the caller already has). An error keeps the message as it was.
type PersistHook func(ctx context.Context, msg tool.ResultMessage) (tool.ResultMessage, error)

type beforeEntry struct {
	name     string
	priority int
	fn       BeforeHook
}

type afterEntry struct {
	name string
	fn   AfterHook
}

type persistEntry struct {
	name string
	fn   PersistHook
}

// OnBefore adds a before_tool_call hook. Hooks run in priority order, higher
// first; equal priorities keep the order they were added in.
func (h *Hooks) OnBefore(name string, priority int, fn BeforeHook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := append(slices.Clone(h.before), beforeEntry{name, priority, fn})
	slices.SortStableFunc(next, func(a, b beforeEntry) int { return cmp.Compare(b.priority, a.priority) })
	h.before = next
}

// OnAfter adds an after_tool_call hook. After-hooks of a call run
// concurrently.
func (h *Hooks) OnAfter(name string, fn AfterHook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.after = append(slices.Clone(h.after), afterEntry{name, fn})
}

// OnPersist adds a tool_result_persist hook. They run in the order added.
func (h *Hooks) OnPersist(name string, fn PersistHook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.persist = append(slices.Clone(h.persist), persistEntry{name, fn})
}

func (h *Hooks) snapshot() ([]beforeEntry, []afterEntry, []persistEntry) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.before, h.after, h.persist
}

// HookFailed is the reason given when a before_tool_call hook fails.
const HookFailed = "Tool call blocked because before_tool_call hook failed"

// Blocked is the result of a blocked call:
// {"status":"blocked","tool":NAME,"reason":REASON}.
func Blocked(name, reason string) tool.Result {
	return tool.Envelope{Status: "blocked", Tool: name, Reason: reason}.Result()
}

// block emits the block event and returns the blocked result.
func block(req *Request, reason string) tool.Result {
	if req.Outcome == "" {
		req.Outcome = OutcomeBlocked
	}
	req.emit(Event{Type: EventBlocked, Reason: reason})
	return Blocked(req.Tool.Name, reason)
}

// hooksStep is the "hooks" step: it runs the before_tool_call hooks (see
// runBeforeHooks).
func (r *Runner) hooksStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if res, stop := r.runBeforeHooks(ctx, req); stop {
			return res
		}
		return next(ctx, req)
	}
}

// runBeforeHooks runs the before_tool_call hooks on the call's parameters
// as they stand. When they change them, the new parameters are validated
// and the policy decides again about the call as it now stands (the files
// it touches may have changed). It returns the result to return instead of
// running the call, if any. The confirm step runs them again after a
// permission_request hook updated the parameters, so they judge the input
// the call will run with.
func (r *Runner) runBeforeHooks(ctx context.Context, req *Request) (tool.Result, bool) {
	before, _, _ := r.hooks.snapshot()
	if len(before) == 0 {
		return tool.Result{}, false
	}
	original := req.CloneArgs()
	files, listed := req.files(ctx)
	var params map[string]any
	frozen := false
	for _, h := range before {
		d, err := runBefore(ctx, h, BeforeToolCall{
			CallID: req.Call.ID, Tool: req.Tool.Name, Meta: req.Tool.Meta,
			Params: maps.Clone(original), Files: slices.Clone(files), FilesListed: listed, Context: req.Context,
		})
		if err != nil {
			req.logger().Error("before_tool_call hook failed", "hook", h.name, "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
			req.emit(Event{Type: EventHook, Hook: h.name, Decision: "error", Reason: err.Error()})
			return block(req, HookFailed), true
		}
		decision := "allow"
		switch {
		case d.Block:
			reason := cmp.Or(d.Reason, "blocked by the "+h.name+" hook")
			req.emit(Event{Type: EventHook, Hook: h.name, Decision: "block", Reason: reason})
			return block(req, reason), true
		case d.RequireApproval && req.Approval == nil:
			req.Approval = &Approval{By: "the " + h.name + " hook", Message: d.ApprovalMessage}
			decision = "approval"
			if d.Params != nil && !frozen {
				params = d.Params
			}
			frozen = true
		case d.Params != nil && !frozen:
			params, decision = d.Params, "params"
		}
		req.emit(Event{Type: EventHook, Hook: h.name, Decision: decision})
	}
	if params != nil {
		merged := maps.Clone(original)
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, params)
		if err := req.SetArgs(merged); err != nil {
			return block(req, HookFailed), true
		}
		if bad := validate(req); bad != nil {
			req.logger().Error("before_tool_call hooks produced invalid parameters", "tool", req.Tool.Name, "call", req.Call.ID, "result", ErrorText(*bad))
			return block(req, HookFailed), true
		}
		req.Note("hookParams", slices.Sorted(maps.Keys(params)))
		if r.policy != nil {
			return r.applyPolicy(ctx, req)
		}
	}
	return tool.Result{}, false
}

// runBefore runs one before hook, turning a panic into an error.
func runBefore(ctx context.Context, h beforeEntry, call BeforeToolCall) (d BeforeDecision, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return h.fn(ctx, call)
}

// afterStep is the "after" step: once the call has run, the after_tool_call
// hooks observe it, concurrently; the result is returned when they are done.
func (r *Runner) afterStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		_, after, _ := r.hooks.snapshot()
		if len(after) == 0 {
			return next(ctx, req)
		}
		start := time.Now()
		res := next(ctx, req)
		call := AfterToolCall{
			CallID: req.Call.ID, Tool: req.Tool.Name, Params: req.CloneArgs(),
			Result: r.eventResult(res), Duration: time.Since(start),
		}
		if res.IsError {
			call.Error = call.Result.Error
		}
		hctx := context.WithoutCancel(ctx)
		var wg sync.WaitGroup
		for _, h := range after {
			wg.Go(func() {
				defer func() {
					if p := recover(); p != nil {
						req.logger().Error("after_tool_call hook panicked", "hook", h.name, "panic", p, "stack", string(debug.Stack()))
					}
				}()
				if err := h.fn(hctx, call); err != nil {
					req.logger().Warn("after_tool_call hook failed", "hook", h.name, "tool", req.Tool.Name, "err", err)
				}
			})
		}
		wg.Wait()
		return res
	}
}

// persistStep is the "persist" step: the tool_result_persist hooks may
// rewrite the result message to be stored, which then goes to every
// WithPersist function. The caller's result is left as it is.
func (r *Runner) persistStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		res := next(ctx, req)
		_, _, persist := r.hooks.snapshot()
		if len(r.persist) == 0 && len(persist) == 0 {
			return res
		}
		msg := message(req.Call, req.Tool.Name, res)
		msg.Content = slices.Clone(msg.Content)
		hctx := context.WithoutCancel(ctx)
		for _, h := range persist {
			next, err := runPersist(hctx, h, msg)
			if err != nil {
				req.logger().Warn("tool_result_persist hook failed", "hook", h.name, "err", err)
				continue
			}
			msg = next
		}
		for _, fn := range r.persist {
			fn(hctx, msg)
		}
		return res
	}
}

func runPersist(ctx context.Context, h persistEntry, msg tool.ResultMessage) (out tool.ResultMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h.fn(ctx, msg)
}
