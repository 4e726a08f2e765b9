package invoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// Request is one call as it moves through the pipeline. Steps may read and
// change it; the execute step hands Call, Context and Update to the tool.
type Request struct {
	// Call is the call. After the arguments step, Call.Arguments is the JSON
	// text of an object (checked to be well formed by the validate step).
	Call tool.Call
	// Tool is the resolved tool.
	Tool *tool.Tool
	// Context says who and where the call runs for.
	Context *tool.Context
	// Scope is the workspace (resolved) and session of the call, which every
	// record of it carries; the context the steps receive carries it too
	// (tool.ScopeFrom).
	Scope tool.Scope
	// Update reports partial results; never nil.
	Update tool.UpdateFunc
	// Log is the runner's logger.
	Log *slog.Logger
	// Started is when the call entered the pipeline.
	Started time.Time
	// Timeout overrides the tool's timeout for this call (bounded by the
	// runner's maximum); zero means none.
	Timeout time.Duration
	// Provider names the model provider the call came from ("openai",
	// "anthropic", "xai", …), for provider-specific repairs; may be empty.
	Provider string
	// Model names the model within the provider ("gpt-5"); may be empty.
	Model string
	// DryRun asks the tool to describe what it would do instead of doing it.
	DryRun bool
	// Approval, when set, asks for a person's approval before the tool runs.
	Approval *Approval
	// Mode is the permission mode the call runs in (see WithModes).
	Mode policy.Mode
	// UndoOf, when set, makes the call the undo of the call of that id
	// (see Runner.Undo): the tool's Undo runs instead of its Execute, with
	// the undo data kept with that call as Call.Arguments, which are
	// neither reshaped, normalized nor validated against the tool's
	// parameters.
	UndoOf string

	// Risk is the call's risk, set by the confirm step. Effects are what its
	// tool's preview says it would do, worked out once for the call's
	// arguments by the first step that needs them (see Request.preview).
	Risk    tool.Risk
	Effects *tool.Effects
	// Verdicts are the policy's per-layer decisions; Confirmation what
	// happened about asking a person; Outcome how the call ended when it did
	// not run normally. For the audit log.
	Verdicts     []policy.Verdict
	Confirmation *ConfirmRecord
	Outcome      Outcome

	runner   *Runner
	onUpdate func(tool.Result)
	// permission are the call's own permission_request hooks.
	permission []permissionEntry
	resolved   *resolvedTool
	args       map[string]any // decoded Call.Arguments, once needed
	quick      int8           // quick check: 0 not done, 1 valid with declared names only, 2 valid, -1 unsure
	previewed  *previewed     // the preview of the current arguments, once asked for
	touched    *touched       // the files the call touches, once worked out
	// preapproved: an allow rule on arguments decided (policy.Result.Preapproved)
	preapproved bool
	notes       map[string]any // what the pipeline did, for the result's details
	during      *during        // what the tool told while it ran, for the audit record
}

// Outcome classifies how a call ended when it did not run normally.
type Outcome string

// The outcomes.
const (
	OutcomeUnknownTool Outcome = "unknown-tool"
	OutcomeValidation  Outcome = "validation"
	OutcomeBlocked     Outcome = "blocked"
	OutcomeDenied      Outcome = "denied"
	OutcomePending     Outcome = "pending"
	OutcomeTimeout     Outcome = "timeout"
	OutcomeCancelled   Outcome = "cancelled"
	OutcomeToolError   Outcome = "tool"
	OutcomePanic       Outcome = "panic"
	// OutcomeAuditDown is a call that changes things, refused because its
	// audit record could not be made durable (see DurableAuditor).
	OutcomeAuditDown Outcome = "audit-unavailable"
)

// Approval is a request for a person's approval of a call.
type Approval struct {
	// By names who asked for it (a hook, a policy rule).
	By string
	// Message is shown to the person asked.
	Message string
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
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Errorf("encoding arguments: %w", err)
	}
	req.args, req.Call.Arguments, req.quick = args, bytes.TrimSuffix(b.Bytes(), []byte("\n")), 0
	req.previewed, req.touched, req.Effects = nil, nil, nil // worked out again for the new arguments
	return nil
}

// CloneArgs returns a shallow copy of the decoded arguments (nil when they
// cannot be decoded).
func (req *Request) CloneArgs() map[string]any {
	args, err := req.Args()
	if err != nil {
		return nil
	}
	return maps.Clone(args)
}

// Validator returns the compiled validator of the request's tool, compiled
// once and cached for as long as the registry does not change.
func (req *Request) Validator() (*schema.Validator, error) {
	if req.resolved == nil || &req.resolved.tool != req.Tool {
		return schema.Compile(req.Tool.Params())
	}
	return req.resolved.validator()
}

// quickCheck checks the arguments from their JSON text without decoding them
// (see schema.Validator.Quick): whether they certainly satisfy the schema,
// and whether they use only names it declares. The answer is kept until
// SetArgs.
func (req *Request) quickCheck() (valid, declared bool) {
	if req.quick == 0 {
		req.quick = -1
		if v, err := req.Validator(); err == nil {
			switch valid, declared := v.Quick(req.Call.Arguments); {
			case declared:
				req.quick = 1
			case valid:
				req.quick = 2
			}
		}
	}
	return req.quick > 0, req.quick == 1
}

// Note records what the pipeline did to the call under key; notes are added
// to the result's details.
func (req *Request) Note(key string, v any) {
	if req.notes == nil {
		req.notes = map[string]any{}
	}
	req.notes[key] = v
}

// emit publishes an event about this call.
func (req *Request) emit(e Event) {
	if req.runner == nil || !req.runner.events.Active() {
		return
	}
	e.ToolCallID, e.ToolName = req.Call.ID, req.Tool.Name
	req.runner.events.Publish(e)
}

func (req *Request) logger() *slog.Logger {
	if req.Log != nil {
		return req.Log
	}
	return slog.Default()
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

// withNotes adds the pipeline's notes to a result's details. Details that
// encode as a JSON object get the notes as more keys (a struct becomes the
// map of its JSON, so JSON readers see the same shape); other details go
// under "details" beside the notes.
func withNotes(details any, notes map[string]any) any {
	if len(notes) == 0 {
		return details
	}
	out := make(map[string]any, len(notes)+1)
	switch d := details.(type) {
	case nil:
	case map[string]any:
		maps.Copy(out, d)
	default:
		var obj map[string]any
		if b, err := json.Marshal(d); err == nil && json.Unmarshal(b, &obj) == nil && obj != nil {
			maps.Copy(out, obj)
		} else {
			out["details"] = d
		}
	}
	maps.Copy(out, notes)
	return out
}
