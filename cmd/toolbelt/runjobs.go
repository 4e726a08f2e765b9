package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/jobtools"
)

// continueFunc runs the agent on with the transcript and a follow-up.
type continueFunc func(ctx context.Context, transcript []llm.Message, followUp llm.Message) ([]llm.Message, error)

// waitForJobs waits for the jobs that session started since the run
// began: each one's outcome reaches the agent as a follow-up user message,
// and the agent continues (and may start more jobs). It returns when no job
// of the session is pending, with the transcript grown by what the agent
// said.
func waitForJobs(ctx context.Context, q *jobs.Queue, session string, since time.Time, transcript []llm.Message, cont continueFunc) ([]llm.Message, error) {
	events, stop := q.Subscribe(0)
	defer stop()
	// A job may be finished by another process (a webhook reaching
	// toolbelt serve): the database is asked at least every second.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	delivered := map[string]bool{}
	for {
		// Pending first: a job finishing in between shows as finished.
		pending, err := q.Pending(ctx, session)
		if err != nil {
			return transcript, err
		}
		finished, err := q.Finished(ctx, session, since)
		if err != nil {
			return transcript, err
		}
		progressed := false
		for _, j := range finished {
			if delivered[j.TaskID] {
				continue
			}
			delivered[j.TaskID] = true
			progressed = true
			if transcript, err = cont(ctx, transcript, llm.UserText(followUp(j))); err != nil {
				return transcript, err
			}
		}
		if progressed {
			continue
		}
		if len(pending) == 0 {
			return transcript, nil
		}
		select {
		case <-ctx.Done():
			return transcript, ctx.Err()
		case <-events:
		case <-tick.C:
		}
	}
}

// followUp is the message that tells the agent how a job ended.
func followUp(j tool.JobInfo) string {
	head := fmt.Sprintf("[Background job %s of %s %s.]", j.TaskID, j.Tool, j.Status)
	switch j.Status {
	case jobs.StatusCompleted:
		return head + "\nResult:\n" + jobtools.ResultText(j.Result)
	case jobs.StatusFailed:
		return head + "\nError: " + j.Error
	}
	return head
}
