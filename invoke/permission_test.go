package invoke_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestPermissionHooks: permission_request hooks decide about a call that
// needs approval before a person is asked — allow (with updated input),
// deny, ask (the person decides) — a deny wins over an allow, and a
// failing hook blocks the call (fail closed).
func TestPermissionHooks(t *testing.T) {
	t.Parallel()
	answer := func(d invoke.PermissionDecision, err error) invoke.PermissionHook {
		return func(_ context.Context, req invoke.PermissionRequest) (invoke.PermissionDecision, error) {
			if req.Tool != "echo" || req.Params["path"] != "a" || req.Reason != "requested by the asks hook: sure?" {
				t.Errorf("hook saw %+v", req)
			}
			return d, err
		}
	}
	allow := answer(invoke.PermissionDecision{Decision: invoke.PermissionAllow, Params: map[string]any{"mode": "text"}}, nil)
	deny := answer(invoke.PermissionDecision{Decision: invoke.PermissionDeny, Reason: "not on main"}, nil)
	for _, tc := range []struct {
		name           string
		runner, call   invoke.PermissionHook
		want           string
		personWasAsked bool
	}{
		{"allow with updated input", allow, nil, `{"mode":"text","path":"a"}`, false},
		{"deny", deny, nil, `{"status":"blocked","tool":"echo","reason":"not on main"}`, false},
		{"ask", answer(invoke.PermissionDecision{Decision: invoke.PermissionAsk}, nil), nil, `{"path":"a"}`, true},
		{"the call's own hook", nil, allow, `{"mode":"text","path":"a"}`, false},
		{"deny wins", allow, deny, `{"status":"blocked","tool":"echo","reason":"not on main"}`, false},
		{"error", answer(invoke.PermissionDecision{}, errors.New("down")), nil, `{"status":"blocked","tool":"echo","reason":"` + invoke.PermissionHookFailed + `"}`, false},
		{"unknown decision", answer(invoke.PermissionDecision{Decision: "maybe"}, nil), nil, `{"status":"blocked","tool":"echo","reason":"` + invoke.PermissionHookFailed + `"}`, false},
		{"invalid updated input", answer(invoke.PermissionDecision{Decision: invoke.PermissionAllow, Params: map[string]any{"offset": "x"}}, nil), nil, `{"status":"blocked","tool":"echo","reason":"` + invoke.PermissionHookFailed + `"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hooks := invoke.NewHooks()
			hooks.OnBefore("asks", 0, func(context.Context, invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
				return invoke.BeforeDecision{RequireApproval: true, ApprovalMessage: "sure?"}, nil
			})
			if tc.runner != nil {
				hooks.OnPermission("guard", tc.runner)
			}
			var asked atomic.Bool
			confirm := invoke.ConfirmFunc(func(context.Context, invoke.Confirmation) (invoke.Answer, error) {
				asked.Store(true)
				return invoke.Answer{Allow: true, By: "test"}, nil
			})
			r := newRunner(t, []tool.Tool{fn("echo", echo)}, invoke.WithHooks(hooks), invoke.WithConfirmer(confirm), quiet)
			var opts []invoke.CallOption
			if tc.call != nil {
				opts = append(opts, invoke.Permission("own", tc.call))
			}
			msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "echo", Arguments: []byte(`{"path":"a"}`)}, opts...)
			if got := text(msg); got != tc.want {
				t.Errorf("result %s, want %s", got, tc.want)
			}
			if asked.Load() != tc.personWasAsked {
				t.Errorf("a person was asked: %v, want %v", asked.Load(), tc.personWasAsked)
			}
		})
	}
}

// TestPermissionUpdatedInputReachesBeforeHooks: the input a
// permission_request hook updates is what the before_tool_call hooks then
// judge (they run again on it, after its validation and the policy): one
// may block it, or change it again (validated again), and the call runs
// with what they leave.
func TestPermissionUpdatedInputReachesBeforeHooks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, updatedPath string
		want              string
		seen              []string
	}{
		{"allowed", "b", `{"mode":"text","path":"b"}`, []string{"a", "b"}},
		{"blocked by a before hook", "secret", `{"status":"blocked","tool":"echo","reason":"no secrets"}`, []string{"a", "secret"}},
		{"changed to invalid input", "bad", `{"status":"blocked","tool":"echo","reason":"` + invoke.HookFailed + `"}`, []string{"a", "bad"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var seen []string
			hooks := invoke.NewHooks()
			hooks.OnBefore("guard", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
				path, _ := c.Params["path"].(string)
				seen = append(seen, path)
				switch path {
				case "secret":
					return invoke.BeforeDecision{Block: true, Reason: "no secrets"}, nil
				case "b":
					return invoke.BeforeDecision{Params: map[string]any{"mode": "text"}}, nil
				case "bad":
					return invoke.BeforeDecision{Params: map[string]any{"offset": "x"}}, nil
				}
				return invoke.BeforeDecision{RequireApproval: true, ApprovalMessage: "sure?"}, nil
			})
			hooks.OnPermission("rewrite", func(context.Context, invoke.PermissionRequest) (invoke.PermissionDecision, error) {
				return invoke.PermissionDecision{Decision: invoke.PermissionAllow, Params: map[string]any{"path": tc.updatedPath}}, nil
			})
			confirm := invoke.ConfirmFunc(func(context.Context, invoke.Confirmation) (invoke.Answer, error) {
				t.Error("a person was asked")
				return invoke.Answer{}, nil
			})
			r := newRunner(t, []tool.Tool{fn("echo", echo)}, invoke.WithHooks(hooks), invoke.WithConfirmer(confirm), quiet)
			msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "echo", Arguments: []byte(`{"path":"a"}`)})
			if got := text(msg); got != tc.want {
				t.Errorf("result %s, want %s", got, tc.want)
			}
			if !slices.Equal(seen, tc.seen) {
				t.Errorf("the before hook saw paths %q, want %q", seen, tc.seen)
			}
		})
	}
}
