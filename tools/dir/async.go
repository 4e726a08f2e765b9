package dir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/tool"
)

// An async tool's handler answers the steps of a durable job, one request
// per step, by operation. In this protocol taskId is always the handler's
// own id of the work (the one its submit answered); Toolbelt's id of the
// job is jobId.
//
//	submit   {operation, arguments, idempotencyKey, jobId, webhookUrl}
//	         → {"success": true, "taskId": "…"}
//	poll     {operation, taskId}
//	         → {"status": "processing", "progress": 40, "message": "…"}
//	           or "status": "completed" with "result", or "failed" with "error"
//	webhook  {operation, payload}: the verified body POSTed to webhookPath
//	         → as poll, with the "taskId" (or "jobId") the payload is about
//
// See docs/schemas/submit.schema.json and its siblings.

// SubmitRequest asks the handler to start the work.
type SubmitRequest struct {
	Operation string `json:"operation"` // "submit"
	// Arguments are the call's validated arguments.
	Arguments json.RawMessage `json:"arguments"`
	// IdempotencyKey is the same for every retry of this submission: a
	// handler that has seen it starts nothing new.
	IdempotencyKey string `json:"idempotencyKey"`
	// JobID is Toolbelt's id of the job (the taskId job_status takes).
	JobID string `json:"jobId"`
	// WebhookURL is where the work's result is to be POSTed (webhook
	// tools, when the server's public URL is configured).
	WebhookURL string `json:"webhookUrl,omitempty"`
	// Settings are the tool's settings, as in a call's Request.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// PollRequest asks the handler how the work goes.
type PollRequest struct {
	Operation string `json:"operation"` // "poll"
	// TaskID is what the handler's submit answered.
	TaskID string `json:"taskId"`
	// Settings are the tool's settings, as in a call's Request.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// WebhookRequest hands the handler a verified webhook delivery.
type WebhookRequest struct {
	Operation string `json:"operation"` // "webhook"
	// Payload is the JSON body POSTed to the tool's webhookPath.
	Payload json.RawMessage `json:"payload"`
	// Settings are the tool's settings, as in a call's Request.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// SubmitResponse is the handler's answer to submit.
type SubmitResponse struct {
	Success *bool  `json:"success"`
	TaskID  string `json:"taskId,omitempty"`
	Error   string `json:"error,omitempty"`
}

// StatusResponse is the handler's answer to poll and webhook. Success is
// optional: false says the step itself failed (it is retried), which is
// not the same as the work having failed ("status": "failed").
type StatusResponse struct {
	Success  *bool           `json:"success,omitempty"`
	Status   tool.AsyncState `json:"status"`
	Progress float64         `json:"progress,omitempty"`
	Message  string          `json:"message,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	// TaskID (the handler's id) or JobID (Toolbelt's) names the work a
	// webhook payload is about; poll answers need neither.
	TaskID string `json:"taskId,omitempty"`
	JobID  string `json:"jobId,omitempty"`
}

// asyncHandler runs an async directory tool's steps with its handler.
type asyncHandler struct{ t *Tool }

func (h asyncHandler) Submit(ctx context.Context, req tool.AsyncSubmit) (string, error) {
	var r SubmitResponse
	err := h.step(ctx, "submit", SubmitRequest{Operation: "submit", Arguments: req.Arguments, IdempotencyKey: req.IdempotencyKey, JobID: req.TaskID, WebhookURL: req.WebhookURL, Settings: h.t.settings}, &r)
	if err != nil {
		return "", err
	}
	switch {
	case r.Success == nil:
		return "", fmt.Errorf(`the handler of %s answered submit without "success": true or false`, h.t.Meta.ID)
	case !*r.Success:
		return "", fmt.Errorf("the handler of %s failed to submit: %s", h.t.Meta.ID, cmpStr(r.Error, "it did not say why"))
	case r.TaskID == "":
		return "", fmt.Errorf(`the handler of %s answered submit without "taskId" (its id of the work, which poll receives)`, h.t.Meta.ID)
	}
	return r.TaskID, nil
}

func (h asyncHandler) Poll(ctx context.Context, taskID string) (tool.AsyncStatus, error) {
	return h.status(ctx, "poll", PollRequest{Operation: "poll", TaskID: taskID, Settings: h.t.settings})
}

func (h asyncHandler) OnWebhook(ctx context.Context, body json.RawMessage) (tool.AsyncStatus, error) {
	return h.status(ctx, "webhook", WebhookRequest{Operation: "webhook", Payload: body, Settings: h.t.settings})
}

// status runs a poll or webhook step and reads its status answer.
func (h asyncHandler) status(ctx context.Context, op string, req any) (tool.AsyncStatus, error) {
	var r StatusResponse
	if err := h.step(ctx, op, req, &r); err != nil {
		return tool.AsyncStatus{}, err
	}
	if r.Success != nil && !*r.Success {
		return tool.AsyncStatus{}, fmt.Errorf("the handler of %s failed to %s: %s", h.t.Meta.ID, op, cmpStr(r.Error, "it did not say why"))
	}
	if r.Progress < 0 || r.Progress > 100 || math.IsNaN(r.Progress) {
		return tool.AsyncStatus{}, fmt.Errorf("the handler of %s answered %s with progress %v, not between 0 and 100", h.t.Meta.ID, op, r.Progress)
	}
	st := tool.AsyncStatus{
		TaskID: r.JobID, ExternalID: r.TaskID, Status: r.Status, Progress: int(math.Round(r.Progress)),
		Message: r.Message, Result: r.Result, Error: r.Error,
	}
	if err := st.Check(); err != nil {
		return tool.AsyncStatus{}, fmt.Errorf("the handler of %s answered %s with a bad status: %v", h.t.Meta.ID, op, err)
	}
	return st, nil
}

// step runs the handler for one step and decodes its answer into out.
func (h asyncHandler) step(ctx context.Context, op string, req, out any) error {
	t := h.t
	if t.settingsErr != nil {
		return t.settingsErr
	}
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var logs []string
	// Only a trusted tool is async (see checkUntrusted): its steps run on
	// the host.
	res, err := t.runHandler(ctx, in, nil, &tool.Context{}, launch{mode: modeHost}, func(line string) {
		if len(logs) < logLines {
			logs = append(logs, line)
		}
	})
	if err != nil {
		return err
	}
	if res.Stopped {
		return cmpErr(context.Cause(ctx), context.Canceled)
	}
	b := bytes.TrimSpace(res.Stdout)
	if err := json.Unmarshal(b, out); err != nil {
		msg := fmt.Sprintf("the handler of %s did not answer %s with one JSON object (exit code %d): %s", t.Meta.ID, op, res.ExitCode, textclip.Clip(string(b), 200))
		if len(logs) > 0 {
			msg += ". Its log lines: " + strings.Join(logs, " | ")
		}
		return errors.New(msg)
	}
	return nil
}

func cmpStr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
