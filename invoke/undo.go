package invoke

import (
	"context"
	"encoding/json"

	"github.com/toolbelt/toolbelt/tool"
)

// Undo runs the undo step of the call undone — as kept with it: its tool
// and the data its result kept (tool.Result.Undo) — as a call of its own
// with a new id, through every step of the pipeline: a policy that
// refuses the tool refuses its undo, a tool that needs approval needs it
// for its undo too, and the audit record names the call undone.
func (r *Runner) Undo(ctx context.Context, undone string, step tool.UndoStep, opts ...CallOption) tool.ResultMessage {
	call := tool.Call{ID: tool.NewCallID("undo"), Name: step.Tool, Arguments: step.Data}
	return r.Run(ctx, call, append(opts, func(req *Request) { req.UndoOf = undone })...)
}

// undoStep runs the tool's Undo for an undo call (Request.UndoOf).
func undoStep(ctx context.Context, req *Request) tool.Result {
	if req.Tool.Undo == nil {
		req.Outcome = OutcomeToolError
		return tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: req.Tool.Name + " has no undo step: its calls cannot be undone"}.Result()
	}
	res, err := req.Tool.Undo(ctx, req.Call, req.Context, req.Update)
	if err != nil {
		req.Outcome = OutcomeToolError
		return ErrorResult(req.Tool, err)
	}
	return res
}

// keepUndo keeps the undo step of a call whose result has undo data in the
// journal of its context, when that journal keeps steps. A step that
// cannot be kept is logged: the call did its work, and its result stands.
func keepUndo(ctx context.Context, req *Request, data any) {
	j, ok := req.Context.Journal.(tool.StepJournal)
	if !ok || req.Tool.Undo == nil {
		req.logger().Warn("the call's undo data is not kept: its tool has no undo step, or its context no journal that keeps steps", "tool", req.Tool.Name, "call", req.Call.ID)
		return
	}
	b, err := json.Marshal(data)
	if err == nil {
		err = j.RecordStep(ctx, req.Call.ID, tool.UndoStep{Tool: req.Tool.Name, Data: b})
	}
	if err != nil {
		req.logger().Error("keeping the call's undo step failed: it cannot be undone", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
	}
}
