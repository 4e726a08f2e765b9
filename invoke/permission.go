package invoke

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// PermissionRequest is what a permission_request hook sees: a call that
// needs a person's approval, before the person is asked.
type PermissionRequest struct {
	CallID string
	Tool   string
	// Params are the call's parameters (a copy per hook).
	Params map[string]any
	Risk   tool.Risk
	// Reason says why a person would be asked ("high risk", an ask rule).
	Reason string
	// Caller is who asks for the call.
	Caller tool.Identity
}

// The decisions of a permission_request hook.
const (
	PermissionAllow = "allow"
	PermissionDeny  = "deny"
	PermissionAsk   = "ask"
)

// PermissionDecision is a permission_request hook's answer. The zero value
// (Decision "" or "ask") leaves the question to a person.
type PermissionDecision struct {
	// Decision is PermissionAllow (run without asking), PermissionDeny
	// (block; Reason goes to the model) or PermissionAsk.
	Decision string
	Reason   string
	// Params, with allow, are merged shallowly over the call's parameters
	// (the updated input it runs with); the call is validated and decided
	// by policy again. With ask or deny they are ignored: a person is
	// asked about the call as the model made it.
	Params map[string]any
}

// PermissionHook decides about a call that needs a person's approval,
// before the person is asked. An error or a panic blocks the call (fail
// closed).
type PermissionHook func(ctx context.Context, req PermissionRequest) (PermissionDecision, error)

type permissionEntry struct {
	name string
	fn   PermissionHook
}

// OnPermission adds a permission_request hook. They run in the order added,
// before those a call brings (Permission); a deny from any of them wins,
// then an allow.
func (h *Hooks) OnPermission(name string, fn PermissionHook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.permission = append(slices.Clone(h.permission), permissionEntry{name, fn})
}

// Permission adds a permission_request hook for this call only (an agent's
// own), run after the runner's.
func Permission(name string, fn PermissionHook) CallOption {
	return func(req *Request) {
		req.permission = append(req.permission, permissionEntry{name, fn})
	}
}

// PermissionHookFailed is the reason given when a permission_request hook
// fails.
const PermissionHookFailed = "Tool call blocked because a permission_request hook failed"

// askHooks runs the permission_request hooks of a call that needs a
// person's approval for why. It returns the decision (PermissionAsk when
// none decided) and, when the call is blocked or its new parameters are
// refused, the result to return instead of running it.
func (r *Runner) askHooks(ctx context.Context, req *Request, why string) (decision string, res tool.Result, stop bool) {
	r.hooks.mu.RLock()
	hooks := append(slices.Clone(r.hooks.permission), req.permission...)
	r.hooks.mu.RUnlock()
	if len(hooks) == 0 {
		return PermissionAsk, tool.Result{}, false
	}
	original := req.CloneArgs()
	decision = PermissionAsk
	var by, reason string
	var params map[string]any
	for _, h := range hooks {
		d, err := runPermission(ctx, h, PermissionRequest{
			CallID: req.Call.ID, Tool: req.Tool.Name, Params: maps.Clone(original), Risk: req.Risk, Reason: why, Caller: req.Context.Identity,
		})
		if err != nil {
			req.logger().Error("permission_request hook failed", "hook", h.name, "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
			req.emit(Event{Type: EventHook, Hook: h.name, Decision: "error", Reason: err.Error()})
			req.Outcome = OutcomeDenied
			return PermissionDeny, block(req, PermissionHookFailed), true
		}
		switch d.Decision {
		case "", PermissionAsk:
			req.emit(Event{Type: EventHook, Hook: h.name, Decision: PermissionAsk})
			continue
		case PermissionAllow, PermissionDeny:
		default:
			req.emit(Event{Type: EventHook, Hook: h.name, Decision: "error", Reason: "unknown decision " + d.Decision})
			req.Outcome = OutcomeDenied
			return PermissionDeny, block(req, PermissionHookFailed), true
		}
		req.emit(Event{Type: EventHook, Hook: h.name, Decision: d.Decision, Reason: d.Reason})
		if decision != PermissionDeny {
			decision, by, reason = d.Decision, h.name, d.Reason
		}
		if d.Decision == PermissionAllow && d.Params != nil {
			params = d.Params
		}
	}
	switch decision {
	case PermissionDeny:
		req.Confirmation = &ConfirmRecord{Answer: "deny", By: "the " + by + " permission_request hook", Reason: reason, At: time.Now()}
		req.Outcome = OutcomeDenied
		return decision, block(req, cmp.Or(reason, "denied by the "+by+" permission_request hook")), true
	case PermissionAllow:
		req.Confirmation = &ConfirmRecord{Answer: "allow-once", By: "the " + by + " permission_request hook", At: time.Now()}
		if params != nil {
			if res, stop := r.updateArgs(ctx, req, original, params); stop {
				return PermissionDeny, res, true
			}
		}
	}
	return decision, tool.Result{}, false
}

// updateArgs merges params over the call's original parameters, validates
// them, lets policy decide about the call as it now stands, and runs the
// before_tool_call hooks again on them: the updated input is what the rest
// of the pipeline sees, hooks included (they may block it or change it
// again, validated again).
func (r *Runner) updateArgs(ctx context.Context, req *Request, original, params map[string]any) (tool.Result, bool) {
	merged := maps.Clone(original)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, params)
	if err := req.SetArgs(merged); err != nil {
		return block(req, PermissionHookFailed), true
	}
	if bad := validate(req); bad != nil {
		req.logger().Error("permission_request hooks produced invalid parameters", "tool", req.Tool.Name, "call", req.Call.ID, "result", ErrorText(*bad))
		return block(req, PermissionHookFailed), true
	}
	req.Note("hookParams", slices.Sorted(maps.Keys(params)))
	if r.policy != nil {
		if res, stop := r.applyPolicy(ctx, req); stop {
			return res, true
		}
	}
	return r.runBeforeHooks(ctx, req)
}

// runPermission runs one permission_request hook, turning a panic into an
// error.
func runPermission(ctx context.Context, h permissionEntry, req PermissionRequest) (d PermissionDecision, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return h.fn(ctx, req)
}
