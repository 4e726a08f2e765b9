package mcp

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// jobFollower sends the progress of async jobs to the MCP clients that
// started them: a client that called an async tool with a progress token
// receives notifications/progress under that token for the job's events
// (progress 0–100 of 100, the event type and the job's message), after the
// pending result, until the job completes or fails.
type jobFollower struct {
	mu      sync.Mutex
	follows map[string]follow // by task id
}

type follow struct {
	session *sdk.ServerSession
	token   any
}

// followJobs starts forwarding job events of the runner's bus; stop ends it.
// Without a job queue it does nothing (and keeps the bus idle).
func (s *Server) followJobs() (stop func()) {
	s.jobs = &jobFollower{follows: map[string]follow{}}
	if s.runner.Context().Jobs == nil {
		return func() {}
	}
	sub := s.runner.Subscribe(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range sub.Events() {
			if e.Job != nil {
				s.jobs.notify(e, s)
			}
		}
	}()
	return func() { sub.Close(); <-done }
}

// watch remembers who to tell about the job of a pending result.
func (f *jobFollower) watch(msg tool.ResultMessage, ss *sdk.ServerSession, token any) {
	env, ok := msg.Details.(tool.PendingEnvelope)
	if !ok || ss == nil || token == nil {
		return
	}
	f.mu.Lock()
	f.follows[env.TaskID] = follow{session: ss, token: token}
	f.mu.Unlock()
}

func (f *jobFollower) notify(e invoke.Event, s *Server) {
	f.mu.Lock()
	fl, ok := f.follows[e.Job.TaskID]
	final := e.Type == tool.JobCompleted || e.Type == tool.JobFailed
	if ok && final {
		delete(f.follows, e.Job.TaskID)
	}
	f.mu.Unlock()
	if !ok {
		return
	}
	msg := fmt.Sprintf("%s %s: %s", e.Type, e.Job.TaskID, e.Job.Status)
	if e.Job.Message != "" {
		msg += " — " + e.Job.Message
	}
	if e.Job.Error != "" {
		msg += " — " + e.Job.Error
	}
	p := &sdk.ProgressNotificationParams{ProgressToken: fl.token, Progress: float64(e.Job.Progress), Total: 100, Message: msg}
	if err := fl.session.NotifyProgress(context.Background(), p); err != nil {
		s.opts.Logger.Debug("job progress notification failed", "taskId", e.Job.TaskID, "err", err)
	}
}
