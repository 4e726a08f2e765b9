package invoke_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// instant is an async handler whose work is done at the first poll.
type instant struct{ submits chan tool.AsyncSubmit }

func (h instant) Submit(_ context.Context, req tool.AsyncSubmit) (string, error) {
	h.submits <- req
	return "ext-" + req.TaskID, nil
}

func (instant) Poll(context.Context, string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncCompleted, Result: json.RawMessage(`"clip.mp4"`)}, nil
}

func (instant) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, nil
}

func TestAsyncToolReturnsPendingAndPublishesJobEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q, err := jobs.Open(ctx, filepath.Join(t.TempDir(), "t.db"), jobs.Config{Run: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	h := instant{submits: make(chan tool.AsyncSubmit, 4)}
	video := tool.Tool{Name: "video", Description: "makes a video", Async: &tool.AsyncSpec{Type: tool.AsyncPolling, EstimatedTime: 90 * time.Second, PollingInterval: 10 * time.Millisecond}, Handler: h}
	// Its work reaches the world; the envelope is Toolbelt's, never wrapped.
	video.Meta.ExternalContent = true
	forbidden := video
	forbidden.Name = "forbidden"
	if err := q.Register(video, forbidden); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	log := &records{}
	p := &policy.Policy{Tools: policy.Rules{Deny: []string{"forbidden"}}}
	r := newRunner(t, []tool.Tool{video, forbidden}, invoke.WithJobs(q), invoke.WithAudit(log), invoke.WithPolicy(p))
	sub := r.Subscribe(0)
	defer sub.Close()

	msg := r.Run(ctx, tool.Call{ID: "c1", Name: "video", Arguments: json.RawMessage(`{"prompt":"a cat"}`)})
	if msg.IsError {
		t.Fatalf("submission failed: %+v", msg)
	}
	var env tool.PendingEnvelope
	if err := json.Unmarshal([]byte(msg.Content[0].Text), &env); err != nil {
		t.Fatalf("result text is not the envelope: %q", msg.Content[0].Text)
	}
	if env.Status != "pending" || env.Tool != "video" || !strings.HasPrefix(env.TaskID, "task") || env.EstimatedTime != 90 || !strings.Contains(env.Message, "job_status") {
		t.Fatalf("envelope = %+v", env)
	}
	if d, ok := msg.Details.(tool.PendingEnvelope); !ok || d != env {
		t.Errorf("details = %#v, want the envelope's fields", msg.Details)
	}
	if req := <-h.submits; req.TaskID != env.TaskID || req.IdempotencyKey != env.TaskID || string(req.Arguments) != `{"prompt":"a cat"}` {
		t.Errorf("Submit got %+v", req)
	}
	var types []invoke.EventType
	timeout := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case e := <-sub.Events():
			if e.Job == nil {
				continue
			}
			types = append(types, e.Type)
			if e.Job.TaskID != env.TaskID || e.ToolCallID != "c1" || e.ToolName != "video" {
				t.Errorf("event %+v", e)
			}
			done = e.Type == tool.JobCompleted
		case <-timeout:
			t.Fatalf("no completion; events %v", types)
		}
	}
	if types[0] != tool.JobSubmitted {
		t.Errorf("events = %v", types)
	}
	// Policy applies to the submission: nothing is submitted.
	msg = r.Run(ctx, tool.Call{ID: "c2", Name: "forbidden"})
	if !msg.IsError || !strings.Contains(msg.Content[0].Text, "blocked") {
		t.Errorf("denied async call: %+v", msg)
	}
	if list, _ := q.List(ctx, jobs.Filter{}); len(list) != 1 {
		t.Errorf("jobs after a denied call: %+v", list)
	}
	// Both calls are audited.
	if len(log.list) != 2 || log.list[0].Tool != "video" || log.list[1].ErrorClass != "denied" {
		t.Errorf("audit = %+v", log.list)
	}
}

func TestAsyncToolWithoutQueueSaysSo(t *testing.T) {
	t.Parallel()
	video := tool.Tool{Name: "video", Async: &tool.AsyncSpec{Type: tool.AsyncPolling}, Handler: instant{}}
	r := newRunner(t, []tool.Tool{video})
	msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "video"})
	if !msg.IsError || !strings.Contains(msg.Content[0].Text, "no job queue is configured") {
		t.Errorf("result = %+v", msg)
	}
}
