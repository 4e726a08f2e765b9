// Package jobtools holds the tools over async jobs: job_status reads a
// job (its status, progress and, when done, its result) and job_cancel
// stops one. Both see only the jobs of the caller's workspace and session,
// and are available only when the context has a job queue.
package jobtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Register adds job_status and job_cancel.
func Register(reg *registry.Registry) error {
	if err := reg.RegisterFactory(statusTool, tool.Meta{ID: "job_status", Label: "Job Status", Description: statusDescription, ReadOnly: true, Source: tool.SourceCore}); err != nil {
		return err
	}
	return reg.RegisterFactory(cancelTool, tool.Meta{ID: "job_cancel", Label: "Cancel Job", Description: cancelDescription, Idempotent: true, Risk: tool.RiskLow, Source: tool.SourceCore})
}

const statusDescription = "Read a background job started by an async tool (the taskId of its pending result): " +
	"its status (pending, processing, completed, failed, cancelled), progress 0-100 with a message, and its result or error when it has finished."

const cancelDescription = "Cancel a background job started by an async tool (the taskId of its pending result) that has not finished yet."

type args struct {
	TaskID string `json:"taskId" jsonschema:"the taskId of the async tool's pending result"`
}

func usable(tc *tool.Context) error {
	if tc == nil || tc.Jobs == nil {
		return errors.New("no async tools are loaded here, so there are no jobs to follow (async tools declare async in their metadata; see docs/jobs.md)")
	}
	return nil
}

func statusTool(tc *tool.Context) (*tool.Tool, error) {
	if err := usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("job_status", statusDescription, func(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
		j, err := inv.Context.Jobs.Job(ctx, scope(ctx, inv.Context), strings.TrimSpace(in.TaskID))
		if err != nil {
			return notFound(in.TaskID, err), nil
		}
		return describe(j), nil
	})
	return &t, err
}

func cancelTool(tc *tool.Context) (*tool.Tool, error) {
	if err := usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("job_cancel", cancelDescription, func(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
		j, err := inv.Context.Jobs.Cancel(ctx, scope(ctx, inv.Context), strings.TrimSpace(in.TaskID))
		if err != nil {
			if j.TaskID != "" { // it exists but has finished
				return tool.Errorf("%v.", err), nil
			}
			return notFound(in.TaskID, err), nil
		}
		return describe(j), nil
	})
	return &t, err
}

// scope is the call's scope as the pipeline set it.
func scope(ctx context.Context, tc *tool.Context) tool.Scope {
	if s, ok := tool.ScopeFrom(ctx); ok {
		return s
	}
	if tc == nil {
		return tool.Scope{}
	}
	return tc.Scope()
}

func notFound(id string, err error) tool.Result {
	return tool.Errorf("No job %q in this session (%v). Use the taskId of a pending result this session received.", id, err)
}

// describe renders a job for a model: a line of status, then what the
// job's handler reported (see Outcome) as text from outside, and the job as
// details.
func describe(j tool.JobInfo) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s (%s): %s", j.TaskID, j.Tool, j.Status)
	if !j.Final() {
		fmt.Fprintf(&b, ", %d%%. It runs in the background; its result is delivered to this session when it finishes.", j.Progress)
	}
	res := tool.Text(b.String())
	if out := Outcome(j); out != "" {
		res.Content = append(res.Content, tool.Content{Type: tool.TextContent, Text: out, Origin: tool.FromOutside(Source(j))})
	}
	res.Details = j
	return res
}

// Outcome renders what a job's handler reported: its message while it
// runs, its result or its error when it has finished; "" when there is
// none. It is text from outside — a webhook's body, a remote service's
// answer to a poll — and reaches a model only wrapped as untrusted content.
func Outcome(j tool.JobInfo) string {
	switch {
	case j.Status == "completed":
		return "Result: " + ResultText(j.Result)
	case j.Status == "failed":
		return "Error: " + j.Error
	case !j.Final() && j.Message != "":
		return "Message: " + j.Message
	}
	return ""
}

// Source names where a job's outcome came from: "job task_1 of render
// (webhook)".
func Source(j tool.JobInfo) string {
	s := fmt.Sprintf("job %s of %s", j.TaskID, j.Tool)
	if j.AsyncType != "" {
		s += fmt.Sprintf(" (%s)", j.AsyncType)
	}
	return s
}

// ResultText renders a job's result: a JSON string as its text, any other
// value as JSON.
func ResultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(no result)"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
