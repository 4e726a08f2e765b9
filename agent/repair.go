package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tool"
)

// Repair has a model repair the arguments of a tool whose calls failed
// validation twice in a row: it is sent the tool's schema, the arguments
// and the errors, and its answer, a JSON object, is run as the call's
// arguments — validated again by the pipeline. Each repair is recorded in
// the result's details ("repair") and audited (audit.KindRepair).
type Repair struct {
	// Client is the model asked.
	Client llm.Client
	// Audit writes a repair's audit record; nil: none is written.
	Audit func(context.Context, audit.Record) error
}

// repairPrompt is the repairing model's system prompt.
const repairPrompt = `You repair the arguments of a tool call that failed validation against the tool's JSON Schema. Answer with the repaired arguments only: one JSON object that satisfies the schema and keeps the caller's intent, with no other text.`

// RepairInfo is what a repair did, as the result's details keep it.
type RepairInfo struct {
	// Model is the PROVIDER/MODEL that repaired the arguments.
	Model string `json:"model"`
	// Original and Repaired are the arguments before and after; Repaired
	// is empty when the repair failed.
	Original json.RawMessage `json:"original"`
	Repaired json.RawMessage `json:"repaired,omitempty"`
	// Error says why the repair failed.
	Error string `json:"error,omitempty"`
	// CallID is the id of the failed call the repaired one replaces.
	CallID string `json:"callId"`
}

// invalid reports whether a result is the pipeline's validation failure.
func invalid(msg tool.ResultMessage) bool {
	d, ok := msg.Details.(map[string]any)
	return ok && msg.IsError && d["error"] == "validation"
}

// noteValidation counts the validation failures in a row of calls to a
// tool and reports whether this one is the second or later.
func (a *Agent) noteValidation(name string, failed bool) (again bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !failed {
		delete(a.invalidCalls, name)
		return false
	}
	if a.invalidCalls == nil {
		a.invalidCalls = map[string]int{}
	}
	a.invalidCalls[name]++
	return a.invalidCalls[name] >= 2
}

// repair has the repairing model repair the arguments of call c, whose
// result res failed validation, and returns the arguments it gave back.
func (a *Agent) repair(ctx context.Context, c tool.Call, res tool.ResultMessage) (json.RawMessage, error) {
	var params []byte
	for _, t := range a.offered() {
		if strings.EqualFold(t.Name, c.Name) && t.Parameters != nil {
			params, _ = json.Marshal(t.Parameters)
		}
	}
	if params == nil {
		return nil, fmt.Errorf("no schema of tool %s", c.Name)
	}
	var errs strings.Builder
	for _, b := range res.Content {
		errs.WriteString(b.Text)
	}
	ask := fmt.Sprintf("Tool: %s\n\nSchema:\n%s\n\nArguments:\n%s\n\nValidation errors:\n%s", c.Name, params, c.Arguments, textclip.Clip(errs.String(), 4000))
	answer, err := a.Repair.Client.Stream(ctx, llm.Request{System: repairPrompt, Messages: []llm.Message{llm.UserText(ask)}}, nil)
	if err != nil {
		return nil, err
	}
	text := strings.TrimSpace(answer.Text())
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```"))
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON object: %s", textclip.Clip(text, 200))
	}
	return json.RawMessage(text), nil
}

// repaired runs call c again with arguments a repairing model gives, when
// its result res is its tool's second validation failure in a row and a
// repair is configured. It returns the result to use and the id of the
// call that gave it: the repaired call's, a new one, when its arguments
// passed validation. Either way the attempt is in the result's details and
// audited.
func (a *Agent) repaired(ctx context.Context, c tool.Call, res tool.ResultMessage, run func(tool.Call) tool.ResultMessage) (tool.ResultMessage, string) {
	if a.Repair == nil || !a.noteValidation(c.Name, invalid(res)) {
		return res, c.ID
	}
	info := RepairInfo{Model: a.Repair.Client.Provider().Name + "/" + a.Repair.Client.Model(), Original: c.Arguments, CallID: c.ID}
	args, err := a.repair(ctx, c, res)
	fixed := c
	if err == nil {
		info.Repaired = args
		fixed.ID, fixed.Arguments = tool.NewCallID("call"), args
		out := run(fixed)
		if a.noteValidation(c.Name, invalid(out)); invalid(out) {
			err = errors.New("the repaired arguments failed validation too")
		} else {
			res = out
		}
	}
	if err != nil {
		info.Error = err.Error()
		fixed.ID = c.ID
	}
	res.Details = withDetail(res.Details, "repair", info)
	if err := a.auditRepair(ctx, fixed, info); err != nil {
		res.Details = withDetail(res.Details, "repairAuditError", err.Error())
	}
	return res, fixed.ID
}

// auditRepair writes the audit record of a repair whose call is c.
func (a *Agent) auditRepair(ctx context.Context, c tool.Call, info RepairInfo) error {
	if a.Repair.Audit == nil {
		return nil
	}
	note := fmt.Sprintf("%s repaired the arguments of call %s after two validation failures of %s", info.Model, info.CallID, c.Name)
	if info.Error != "" {
		note = fmt.Sprintf("%s could not repair the arguments of call %s (%s): %s", info.Model, info.CallID, c.Name, info.Error)
	}
	args, _ := json.Marshal(info)
	rec := audit.Record{Kind: audit.KindRepair, Time: time.Now(), CallID: c.ID, Tool: c.Name, Arguments: args, IsError: info.Error != "", Note: note}
	id := a.Runner.Context().Identity
	if caller, ok := invoke.CallerFrom(ctx); ok {
		id.RunAs(caller)
	}
	id.Workspace = tool.ResolveDir(id.Workspace)
	rec.SetCaller(id)
	return a.Repair.Audit(context.WithoutCancel(ctx), rec)
}
