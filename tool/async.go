package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// AsyncType says how an async tool learns that its work is done.
type AsyncType string

// The async types.
const (
	// AsyncPolling tools are asked for their status at an interval.
	AsyncPolling AsyncType = "polling"
	// AsyncWebhook tools are told by a POST to their webhook path.
	AsyncWebhook AsyncType = "webhook"
)

// AsyncSpec describes how an async tool's work is followed, after the
// seeds' metadata: asyncType, estimatedTime, pollingInterval, maxRetries,
// webhookPath.
type AsyncSpec struct {
	// Type is polling or webhook.
	Type AsyncType `json:"asyncType"`
	// EstimatedTime is how long the work usually takes.
	EstimatedTime time.Duration `json:"-"`
	// PollingInterval is the time between two polls (polling tools; 5 s
	// when zero).
	PollingInterval time.Duration `json:"-"`
	// MaxRetries bounds the failed attempts of one step (a submission, a
	// poll) before the job fails (10 when zero).
	MaxRetries int `json:"maxRetries,omitempty"`
	// WebhookPath is the path of the HTTP server a webhook tool's results
	// are POSTed to ("/webhooks/video"); webhook tools only.
	WebhookPath string `json:"webhookPath,omitempty"`
}

// The defaults of AsyncSpec.
const (
	DefaultPollingInterval = 5 * time.Second
	DefaultAsyncRetries    = 10
)

// WithDefaults returns s with its zero fields set to the defaults.
func (s AsyncSpec) WithDefaults() AsyncSpec {
	if s.PollingInterval <= 0 {
		s.PollingInterval = DefaultPollingInterval
	}
	if s.MaxRetries <= 0 {
		s.MaxRetries = DefaultAsyncRetries
	}
	return s
}

// Check reports what makes s unusable, in words a tool author can act on.
func (s AsyncSpec) Check() error {
	switch s.Type {
	case AsyncPolling:
		if s.WebhookPath != "" {
			return fmt.Errorf("asyncType polling takes no webhookPath (%q): use asyncType webhook, or remove webhookPath", s.WebhookPath)
		}
	case AsyncWebhook:
		if !strings.HasPrefix(s.WebhookPath, "/") || strings.ContainsAny(s.WebhookPath, "?# {}") {
			return fmt.Errorf("asyncType webhook needs webhookPath, an absolute URL path such as /webhooks/video (got %q)", s.WebhookPath)
		}
	case "":
		return fmt.Errorf("asyncType is missing: use polling or webhook")
	default:
		return fmt.Errorf("asyncType %q is not known: use polling or webhook", s.Type)
	}
	if s.PollingInterval < 0 || s.EstimatedTime < 0 || s.MaxRetries < 0 {
		return fmt.Errorf("estimatedTime, pollingInterval and maxRetries must not be negative")
	}
	return nil
}

// AsyncHandler does an async tool's work, in the seeds' shape: Submit
// starts it and returns the external task id; Poll asks how it goes
// (polling tools); OnWebhook reads a verified webhook body (webhook tools).
// Every method may be called more than once for the same work (a process
// killed midway retries it): Submit receives an idempotency key to pass to
// the system that does the work, so a repeated submission starts nothing
// new.
type AsyncHandler interface {
	Submit(ctx context.Context, req AsyncSubmit) (externalID string, err error)
	Poll(ctx context.Context, externalID string) (AsyncStatus, error)
	OnWebhook(ctx context.Context, body json.RawMessage) (AsyncStatus, error)
}

// AsyncSubmit is what Submit receives.
type AsyncSubmit struct {
	// TaskID is the job's id; IdempotencyKey identifies this submission
	// (the same across retries of it).
	TaskID         string `json:"taskId"`
	IdempotencyKey string `json:"idempotencyKey"`
	// Tool is the tool's name and Arguments its validated arguments.
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// WebhookURL is where the work's result is to be POSTed (webhook
	// tools, when the server's public URL is configured), else "".
	WebhookURL string `json:"webhookUrl,omitempty"`
}

// AsyncState is the state of an external task as a handler reports it.
type AsyncState string

// The states a handler reports.
const (
	AsyncPending    AsyncState = "pending"
	AsyncProcessing AsyncState = "processing"
	AsyncCompleted  AsyncState = "completed"
	AsyncFailed     AsyncState = "failed"
)

// AsyncStatus is how the external work goes.
type AsyncStatus struct {
	// TaskID or ExternalID names the job a webhook is about (the job's id
	// as passed to Submit, or the external id Submit returned); Poll
	// leaves them empty.
	TaskID     string `json:"taskId,omitempty"`
	ExternalID string `json:"externalId,omitempty"`
	// Status is pending, processing, completed or failed.
	Status AsyncState `json:"status"`
	// Progress is 0–100; Message says what is happening.
	Progress int    `json:"progress,omitempty"`
	Message  string `json:"message,omitempty"`
	// Result is the outcome when completed: text, or any JSON value.
	Result json.RawMessage `json:"result,omitempty"`
	// Error says why the work failed.
	Error string `json:"error,omitempty"`
}

// Check reports what is wrong with a status a handler returned.
func (s AsyncStatus) Check() error {
	switch s.Status {
	case AsyncPending, AsyncProcessing, AsyncCompleted, AsyncFailed:
	default:
		return fmt.Errorf("status %q is not one of pending, processing, completed, failed", s.Status)
	}
	if s.Progress < 0 || s.Progress > 100 {
		return fmt.Errorf("progress %d is not between 0 and 100", s.Progress)
	}
	if len(s.Result) > 0 && !json.Valid(s.Result) {
		return fmt.Errorf("result is not valid JSON")
	}
	return nil
}

// Jobs is the durable job queue as tools and the pipeline see it.
type Jobs interface {
	// Submit records a job for an async tool's call and starts it; it
	// returns the job as recorded (status pending).
	Submit(ctx context.Context, t *Tool, call Call, scope Scope) (JobInfo, error)
	// Job returns the job of that id in the scope's workspace.
	Job(ctx context.Context, scope Scope, taskID string) (JobInfo, error)
	// Cancel cancels a job that has not finished and returns it.
	Cancel(ctx context.Context, scope Scope, taskID string) (JobInfo, error)
}

// JobEvent is something that happened to a job, as the job queue reports
// it and the pipeline forwards it.
type JobEvent struct {
	// Type is tool:async:submitted, tool:async:progress,
	// tool:async:completed or tool:async:failed.
	Type string  `json:"type"`
	Job  JobInfo `json:"job"`
}

// JobInfo is a job as callers see it.
type JobInfo struct {
	TaskID      string          `json:"taskId"`
	Tool        string          `json:"tool"`
	Status      string          `json:"status"`
	Progress    int             `json:"progress"`
	Message     string          `json:"message,omitempty"`
	CreatedAt   time.Time       `json:"createdAt"`
	CompletedAt *time.Time      `json:"completedAt"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       string          `json:"error,omitempty"`
	Session     string          `json:"session,omitempty"`
	Workspace   string          `json:"workspace,omitempty"`
	CallID      string          `json:"callId,omitempty"`
	AsyncType   AsyncType       `json:"asyncType,omitempty"`
	// EstimatedTime is in seconds.
	EstimatedTime float64 `json:"estimatedTime,omitempty"`
}

// The events of an async tool's jobs: a job was submitted, moved on
// (progress 0–100 and a message), completed or failed. The job queue
// publishes them (jobs.Event) and the pipeline forwards them on its bus
// (invoke.Event) under these names; they are untyped so that both compare
// and assign them directly.
const (
	JobSubmitted = "tool:async:submitted"
	JobProgress  = "tool:async:progress"
	JobCompleted = "tool:async:completed"
	JobFailed    = "tool:async:failed"
)

// Final reports whether the job has finished (completed, failed or
// cancelled).
func (j JobInfo) Final() bool {
	return j.Status == "completed" || j.Status == "failed" || j.Status == "cancelled"
}

// PendingEnvelope is what a model sees when it called an async tool: the
// job's id, the estimated time and how to follow it.
type PendingEnvelope struct {
	Status        string  `json:"status"`
	Tool          string  `json:"tool"`
	TaskID        string  `json:"taskId"`
	EstimatedTime float64 `json:"estimatedTime"`
	Message       string  `json:"message"`
}

// Pending returns the pending result of a submitted job: its text is the
// envelope's JSON and its details carry the same fields.
func Pending(j JobInfo) Result {
	env := PendingEnvelope{
		Status: "pending", Tool: j.Tool, TaskID: j.TaskID, EstimatedTime: j.EstimatedTime,
		Message: fmt.Sprintf("The work runs in the background as job %s. Its result is delivered to this session when it finishes; to follow it, call job_status with taskId %q (job_cancel stops it).", j.TaskID, j.TaskID),
	}
	b, _ := json.Marshal(env)
	return Result{Content: []Content{{Type: TextContent, Text: string(b), Origin: OwnWords()}}, Details: env}
}
