package invoke

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// The answers a permission mode gives in place of a person (see
// ConfirmRecord.Answer).
const (
	AnswerModeAllow = "mode-allow"
	AnswerModeDeny  = "mode-deny"
)

// WithModes makes the runner's calls run in the permission mode s says
// for their agent (see policy.Mode), read as each call starts; without it
// every call runs in the default mode. The confirm step applies it, after
// the policy (a denied call is denied in every mode) and before anyone is
// asked.
func WithModes(s *policy.ModeSwitch) Option { return func(r *Runner) { r.modes = s } }

// enterMode sets the mode req runs in; a call in bypass mode runs as a
// sandboxed caller, so that its commands run in the sandbox and the
// sandbox's policy layer applies.
func (r *Runner) enterMode(req *Request) {
	req.Mode = r.modes.For(req.Context.Identity.AgentID)
	if req.Mode == policy.ModeBypass && !req.Context.Identity.Sandboxed {
		tc := *req.Context
		tc.Identity.Sandboxed = true
		req.Context = &tc
	}
}

// planRefusal refuses, in plan mode, a call that may change anything: one
// of a tool not marked read-only, unless its preview says this call
// changes nothing. Dry runs change nothing and are not refused.
func planRefusal(ctx context.Context, req *Request) (tool.Result, bool) {
	if req.Mode != policy.ModePlan || req.DryRun || req.Tool.Meta.ReadOnly {
		return tool.Result{}, false
	}
	if e, err := req.preview(ctx); err == nil && e != nil && e.ReadOnly {
		return tool.Result{}, false
	}
	req.Confirmation = &ConfirmRecord{Answer: AnswerModeDeny, By: "plan mode", At: time.Now()}
	req.Outcome = OutcomeDenied
	return block(req, fmt.Sprintf("You are planning (plan mode): %s may change things, so it was not run. Only tools that change nothing run now. Read and search as you need, then present your plan to the user; they leave plan mode to have it carried out.", req.Tool.Name)), true
}

// modeAnswer answers, for the call's mode, the question the confirm step
// would put to a person about it (why it asks): ok false leaves it to a
// person. In acceptEdits mode a change of files inside the workspace is
// allowed, in bypass mode everything; in dontAsk mode everything is
// denied, and res is the blocked result.
func modeAnswer(ctx context.Context, req *Request, why string) (allow bool, res tool.Result, ok bool) {
	switch req.Mode {
	case policy.ModeBypass:
		allow = true
	case policy.ModeAcceptEdits:
		if !editsInWorkspace(ctx, req) {
			return false, tool.Result{}, false
		}
		allow = true
	case policy.ModeDontAsk:
	default:
		return false, tool.Result{}, false
	}
	req.Confirmation = &ConfirmRecord{Answer: AnswerModeDeny, By: string(req.Mode) + " mode"}
	if allow {
		req.Confirmation.Answer = AnswerModeAllow
		return true, tool.Result{}, true
	}
	req.Outcome = OutcomeDenied
	return false, block(req, fmt.Sprintf("This call would need a person's approval (%s), and in dontAsk mode what would ask is denied without asking, so it was not run.", why)), true
}

// editsInWorkspace says whether the call changes files inside the
// workspace and nothing else: a call of a core tool that changes files
// (write, edit, apply_patch) whose preview listed every file it would
// change, each inside the workspace.
func editsInWorkspace(ctx context.Context, req *Request) bool {
	m := req.Tool.Meta
	if m.ReadOnly || m.Source != tool.SourceCore || !catalog.ChangesFiles(m.ID) {
		return false
	}
	files, listed := req.files(ctx)
	if !listed || len(files) == 0 {
		return false
	}
	for _, f := range files {
		if !filepath.IsLocal(f) {
			return false
		}
	}
	return true
}
