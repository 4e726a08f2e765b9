package jobtools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/jobtools"
)

// never is an async handler whose work never finishes.
type never struct{}

func (never) Submit(context.Context, tool.AsyncSubmit) (string, error) { return "ext", nil }
func (never) Poll(context.Context, string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncProcessing, Progress: 30, Message: "rendering"}, nil
}
func (never) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, nil
}

func TestStatusAndCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q, err := jobs.Open(ctx, filepath.Join(t.TempDir(), "t.db"), jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	slow := tool.Tool{Name: "slow", Description: "slow work", Async: &tool.AsyncSpec{Type: tool.AsyncPolling}, Handler: never{}}
	reg := registry.New()
	if err := jobtools.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(slow); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	mine := invoke.New(reg, &tool.Context{WorkspaceDir: ws, SessionKey: "s1"}, invoke.WithJobs(q))
	other := invoke.New(reg, &tool.Context{WorkspaceDir: ws, SessionKey: "s2"}, invoke.WithJobs(q))

	msg := mine.Run(ctx, tool.Call{Name: "slow"})
	var env tool.PendingEnvelope
	if err := json.Unmarshal([]byte(msg.Content[0].Text), &env); err != nil || env.TaskID == "" {
		t.Fatalf("submission: %+v", msg)
	}
	arg := json.RawMessage(`{"taskId":"` + env.TaskID + `"}`)
	text := func(m tool.ResultMessage) string { return m.Content[0].Text }

	st := mine.Run(ctx, tool.Call{Name: "job_status", Arguments: arg})
	if st.IsError || !strings.Contains(text(st), "slow): pending") {
		t.Errorf("job_status = %q", text(st))
	}
	if d, ok := st.Details.(tool.JobInfo); !ok || d.TaskID != env.TaskID {
		t.Errorf("details = %#v", st.Details)
	}
	for _, name := range []string{"job_status", "job_cancel"} {
		if m := other.Run(ctx, tool.Call{Name: name, Arguments: arg}); !m.IsError || !strings.Contains(text(m), "No job") {
			t.Errorf("%s from another session = %q", name, text(m))
		}
	}
	c := mine.Run(ctx, tool.Call{Name: "job_cancel", Arguments: arg})
	if c.IsError || !strings.Contains(text(c), "cancelled") {
		t.Errorf("job_cancel = %q", text(c))
	}
	again := mine.Run(ctx, tool.Call{Name: "job_cancel", Arguments: arg})
	if !again.IsError || !strings.Contains(text(again), "already finished") {
		t.Errorf("second job_cancel = %q", text(again))
	}
	// Without a queue the tools are not offered.
	bare := invoke.New(reg, &tool.Context{WorkspaceDir: ws})
	for _, tt := range bare.Tools(nil) {
		if strings.HasPrefix(tt.Name, "job_") {
			t.Errorf("%s offered without a job queue", tt.Name)
		}
	}
}
