package invoke

import (
	"sync"

	"github.com/toolbelt/toolbelt/tool"
)

// JobQueue is a durable job queue as the runner uses it (a jobs.Queue is
// one): async tools submit their calls to it, and the runner publishes the
// events of its jobs.
type JobQueue interface {
	tool.Jobs
	// Subscribe returns a channel of the events of the queue's jobs, with a
	// buffer of buffer events (a default when <= 0), and a function that
	// ends the subscription.
	Subscribe(buffer int) (<-chan tool.JobEvent, func())
}

// WithJobs gives the runner a durable job queue: async tools submit their
// calls to it (through the tool context's Jobs), and the events of the
// queue's jobs — submitted, progress, completed, failed — are published on
// the runner's bus as tool:async:* events until the runner or the queue is
// closed.
func WithJobs(q JobQueue) Option {
	return func(r *Runner) {
		r.jobs = q
	}
}

// forwardJobs publishes the queue's events on the bus until Close.
func (r *Runner) forwardJobs() {
	events, unsubscribe := r.jobs.Subscribe(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range events {
			j := e.Job
			r.events.Publish(Event{Type: EventType(e.Type), ToolCallID: j.CallID, ToolName: j.Tool, Job: &j})
		}
	}()
	r.release = sync.OnceFunc(func() {
		unsubscribe()
		<-done
	})
}

// Close releases what the runner subscribed to — the job queue's events —
// and returns once their forwarding has ended. Whoever makes a runner for a
// bounded time (a command, a client session, an agent session) closes it
// when that time ends. Calls may still run after Close, but the events of
// their jobs are no longer published. Close is idempotent.
func (r *Runner) Close() {
	if r.release != nil {
		r.release()
	}
}
