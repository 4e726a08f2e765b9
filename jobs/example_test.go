package jobs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// kling would call a video service; here it only shows the shape.
type kling struct{}

func (kling) Submit(ctx context.Context, req tool.AsyncSubmit) (string, error) {
	return "ext-" + req.IdempotencyKey, nil
}

func (kling) Poll(ctx context.Context, externalID string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncCompleted, Result: json.RawMessage(`{"url":"https://videos.example.com/1.mp4"}`)}, nil
}

func (kling) OnWebhook(ctx context.Context, body json.RawMessage) (tool.AsyncStatus, error) {
	var st tool.AsyncStatus
	err := json.Unmarshal(body, &st)
	return st, err
}

// An async tool, a queue that works its jobs on the store's database, and
// a runner whose calls of it return pending results.
func Example() {
	ctx := context.Background()
	dsn, secret := "/tmp/toolbelt-example.db", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	params := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"prompt": {Type: "string"}}}
	video := tool.Tool{
		Name:        "video_generate",
		Description: "Generates a short video from a prompt; the URL is delivered when it is ready.",
		Parameters:  params,
		Async: &tool.AsyncSpec{
			Type:            tool.AsyncPolling, // or tool.AsyncWebhook with WebhookPath
			EstimatedTime:   2 * time.Minute,
			PollingInterval: 5 * time.Second,
			MaxRetries:      10,
		},
		Handler: kling{}, // Submit, Poll, OnWebhook
	}
	reg := registry.New()
	if err := reg.Register(video); err != nil {
		panic(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: "."}}

	q, err := jobs.Open(ctx, dsn, jobs.Config{Run: true, WebhookSecret: secret})
	if err != nil {
		panic(err)
	}
	q.Register(video)
	q.Start(ctx)
	defer q.Stop(ctx)
	r := invoke.New(reg, tc, invoke.WithJobs(q))
	http.Handle("POST /webhooks/video", q.WebhookHandler()) // for each q.WebhookPaths()

	msg := r.Run(ctx, tool.Call{Name: "video_generate", Arguments: json.RawMessage(`{"prompt":"a cat"}`)})
	_ = msg // {"status":"pending","tool":"video_generate","taskId":…}
}
