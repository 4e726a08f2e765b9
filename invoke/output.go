package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// CheckOutput is the "output" step: a successful result of a tool with an
// output schema (tool.Tool.Output) must have structured content, its
// Details, that fits the schema. One that does not becomes an error
// result naming every violation: a client reading the structured content
// relies on the schema, and the tool (or the imported server) broke it.
func CheckOutput(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		res := next(ctx, req)
		if req.Tool.Output == nil || res.IsError || req.DryRun || req.Tool.Async != nil || req.UndoOf != "" {
			return res
		}
		if problem := checkOutput(req, res.Details); problem != "" {
			req.Outcome = OutcomeToolError
			return tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: "the tool's result does not fit its output schema: " + problem}.Result()
		}
		return res
	}
}

// checkOutput returns what is wrong with details under the tool's output
// schema, or "".
func checkOutput(req *Request, details any) string {
	v, err := req.outputValidator()
	if err != nil {
		return "the schema is invalid: " + err.Error()
	}
	if details == nil {
		return "it has no structured content"
	}
	b, err := json.Marshal(details)
	if err != nil {
		return "its structured content is not JSON: " + err.Error()
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return "its structured content is not JSON: " + err.Error()
	}
	errs := v.Validate(doc)
	if len(errs) == 0 {
		return ""
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.String()
	}
	return strings.Join(msgs, "; ")
}

// outputValidator returns the compiled validator of the tool's output
// schema, cached like the parameters' (Request.Validator).
func (req *Request) outputValidator() (*schema.Validator, error) {
	if req.resolved == nil || &req.resolved.tool != req.Tool {
		return compileOutput(req.Tool)
	}
	rt := req.resolved
	rt.outputOnce.Do(func() { rt.output, rt.outputErr = compileOutput(&rt.tool) })
	return rt.output, rt.outputErr
}

func compileOutput(t *tool.Tool) (*schema.Validator, error) {
	v, err := schema.Compile(t.Output)
	if err != nil {
		return nil, fmt.Errorf("compiling %s's output schema: %w", t.Name, err)
	}
	return v, nil
}
