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

// planRefusal says why, in plan mode, a call that may change anything is
// refused — one of a tool not marked read-only, unless its preview says
// this call changes nothing — and "" for a call the mode lets through. Dry
// runs change nothing and are not refused.
func planRefusal(ctx context.Context, req *Request) string {
	if req.Mode != policy.ModePlan || req.DryRun || req.Tool.Meta.ReadOnly {
		return ""
	}
	if e, err := req.preview(ctx); err == nil && e != nil && e.ReadOnly {
		return ""
	}
	return fmt.Sprintf("You are planning (plan mode): %s may change things, so it was not run. Only tools that change nothing run now. Read and search as you need, then present your plan to the user; they leave plan mode to have it carried out.", req.Tool.Name)
}

// modeAnswer answers, for the call's mode, the question the confirm step
// would put to a person about it (why it asks): ok false leaves it to a
// person; otherwise refusal says why the mode denies it, "" when it
// allows it. In acceptEdits mode a change of files inside the workspace is
// allowed, in bypass mode everything; in dontAsk mode everything is
// denied.
func modeAnswer(ctx context.Context, req *Request, why string) (refusal string, ok bool) {
	switch req.Mode {
	case policy.ModeBypass:
		return "", true
	case policy.ModeAcceptEdits:
		return "", editsInWorkspace(ctx, req)
	case policy.ModeDontAsk:
		return fmt.Sprintf("This call would need a person's approval (%s), and in dontAsk mode what would ask is denied without asking, so it was not run.", why), true
	}
	return "", false
}

// modeAnswered records that the call's mode answered in a person's place:
// it denied the call, saying why (refusal), or allowed it ("").
func modeAnswered(req *Request, refusal string) {
	req.Confirmation = &ConfirmRecord{Answer: AnswerModeAllow, By: string(req.Mode) + " mode", At: time.Now()}
	if refusal != "" {
		req.Confirmation.Answer, req.Outcome = AnswerModeDeny, OutcomeDenied
	}
}

// editsInWorkspace says whether the call changes files inside the
// workspace and nothing else: a call of a core tool that changes files
// (write, edit, apply_patch, tts) whose preview listed every file it would
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
