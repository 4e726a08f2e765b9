package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/jobtools"
)

// waitIdle returns when the host is idle and no job that session started
// since the run began is pending. Each finished job's outcome reaches the
// session as a follow-up user message (running it again when it is idle),
// and the agent may start more jobs.
func waitIdle(ctx context.Context, h *runHost, q *jobs.Queue, session string, since time.Time) error {
	if q == nil || session == "" {
		return h.Wait(ctx)
	}
	return watchJobs(ctx, h, q, session, since, true)
}

// followJobs hands the outcome of each job session starts from since to
// the session as a follow-up, as it finishes, until ctx ends: the jobs of
// a chat, whose turns do not wait for them.
func followJobs(ctx context.Context, h *runHost, q *jobs.Queue, session string, since time.Time) {
	if err := watchJobs(ctx, h, q, session, since, false); err != nil && ctx.Err() == nil {
		h.e.log.Warn("following the chat's jobs", "err", err)
	}
}

// watchJobs delivers the outcomes of session's jobs as they finish. With
// untilIdle it returns once the host is idle and none is pending;
// otherwise it goes on until ctx ends.
func watchJobs(ctx context.Context, h *runHost, q *jobs.Queue, session string, since time.Time, untilIdle bool) error {
	events, stop := q.Subscribe(0)
	defer stop()
	// A job may be finished by another process (a webhook reaching
	// toolbelt serve): the database is asked at least every second.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	delivered := map[string]bool{}
	for {
		if untilIdle {
			if err := h.Wait(ctx); err != nil {
				return err
			}
		}
		// Pending first: a job finishing in between shows as finished.
		pending, err := q.Pending(ctx, session)
		if err != nil {
			return err
		}
		finished, err := q.Finished(ctx, session, since)
		if err != nil {
			return err
		}
		if untilIdle {
			// The run waits for them: the view's spinner says so.
			for _, j := range pending {
				h.view.jobPending(j)
			}
		}
		progressed := false
		for _, j := range finished {
			if delivered[j.TaskID] {
				continue
			}
			delivered[j.TaskID] = true
			progressed = true
			h.view.jobFinished(j)
			if err := h.Deliver(ctx, session, llm.UserText(followUp(j))); err != nil {
				return err
			}
		}
		if progressed {
			continue
		}
		if untilIdle && len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-events:
			if ev.Type == tool.JobProgress && ev.Job.Session == session {
				h.view.jobProgress(ev.Job)
			}
		case <-tick.C:
		}
	}
}

// followUp is the message that tells the agent how a job ended: what the
// job's handler reported is text from outside, wrapped as untrusted
// content with its source.
func followUp(j tool.JobInfo) string {
	head := fmt.Sprintf("[Background job %s of %s %s.]", j.TaskID, j.Tool, j.Status)
	if out := jobtools.Outcome(j); out != "" {
		return head + "\n" + content.WrapExternal(out, content.Wrap{Source: jobtools.Source(j)})
	}
	return head
}
