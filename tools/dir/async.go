package dir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// AsyncRequest is what an async tool's handler reads for a step, besides
// the fields of Request: operation is "submit", "poll" or "webhook".
//
//	submit   {operation, arguments, taskId, idempotencyKey, webhookUrl}
//	         → {"success": true, "externalId": "…"}
//	poll     {operation, taskId, externalId}
//	         → {"success": true, "status": "processing", "progress": 40, "message": "…"}
//	           or "status": "completed" with "result", or "failed" with "error"
//	webhook  {operation, body}: the verified body POSTed to webhookPath
//	         → as poll, with the "taskId" or "externalId" the body is about
type AsyncRequest struct {
	Operation      string          `json:"operation"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	TaskID         string          `json:"taskId,omitempty"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty"`
	WebhookURL     string          `json:"webhookUrl,omitempty"`
	ExternalID     string          `json:"externalId,omitempty"`
	Body           json.RawMessage `json:"body,omitempty"`
}

// asyncResponse is what the handler answers for a step.
type asyncResponse struct {
	Success *bool `json:"success"`
	tool.AsyncStatus
}

// asyncHandler runs an async directory tool's steps with its handler.
type asyncHandler struct{ t *Tool }

func (h asyncHandler) Submit(ctx context.Context, req tool.AsyncSubmit) (string, error) {
	r, err := h.step(ctx, AsyncRequest{Operation: "submit", Arguments: req.Arguments, TaskID: req.TaskID, IdempotencyKey: req.IdempotencyKey, WebhookURL: req.WebhookURL}, false)
	if err != nil {
		return "", err
	}
	if r.ExternalID == "" {
		return "", fmt.Errorf(`the handler of %s answered submit without "externalId"`, h.t.Meta.ID)
	}
	return r.ExternalID, nil
}

func (h asyncHandler) Poll(ctx context.Context, externalID string) (tool.AsyncStatus, error) {
	r, err := h.step(ctx, AsyncRequest{Operation: "poll", ExternalID: externalID}, true)
	return r.AsyncStatus, err
}

func (h asyncHandler) OnWebhook(ctx context.Context, body json.RawMessage) (tool.AsyncStatus, error) {
	r, err := h.step(ctx, AsyncRequest{Operation: "webhook", Body: body}, true)
	return r.AsyncStatus, err
}

// step runs the handler for one step and reads its answer.
func (h asyncHandler) step(ctx context.Context, req AsyncRequest, wantStatus bool) (asyncResponse, error) {
	t := h.t
	in, err := json.Marshal(req)
	if err != nil {
		return asyncResponse{}, err
	}
	var logs []string
	res, err := t.runHandler(ctx, in, &tool.Context{}, func(line string) {
		if len(logs) < logLines {
			logs = append(logs, line)
		}
	})
	if err != nil {
		return asyncResponse{}, err
	}
	if res.Stopped {
		return asyncResponse{}, cmpErr(context.Cause(ctx), context.Canceled)
	}
	fail := func(msg string) (asyncResponse, error) {
		if len(logs) > 0 {
			msg += ". Its log lines: " + strings.Join(logs, " | ")
		}
		return asyncResponse{}, errors.New(msg)
	}
	var r asyncResponse
	out := bytes.TrimSpace(res.Stdout)
	if err := json.Unmarshal(out, &r); err != nil {
		return fail(fmt.Sprintf("the handler of %s did not answer %s with one JSON object (exit code %d): %s", t.Meta.ID, req.Operation, res.ExitCode, shorten(string(out), 200)))
	}
	switch {
	case r.Success == nil:
		return fail(fmt.Sprintf(`the handler of %s answered %s without "success": true or false`, t.Meta.ID, req.Operation))
	case !*r.Success:
		return fail(fmt.Sprintf("the handler of %s failed to %s: %s", t.Meta.ID, req.Operation, cmpStr(r.Error, "it did not say why")))
	}
	if wantStatus {
		if err := r.Check(); err != nil {
			return fail(fmt.Sprintf("the handler of %s answered %s with a bad status: %v", t.Meta.ID, req.Operation, err))
		}
	}
	return r, nil
}

func cmpStr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
