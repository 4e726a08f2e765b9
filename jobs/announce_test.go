package jobs

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// TestSubmittedIsTheFirstEvent: the events of a job published while its
// submission commits (a worker runs a job as soon as it is committed,
// before the submitter has published that it was submitted) reach
// subscribers after its submitted event, in order; another job's events
// are not held; when the submission fails, what was held is sent; two
// submissions of one job at once lose none of its events.
func TestSubmittedIsTheFirstEvent(t *testing.T) {
	q, err := Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	events, stop := q.Subscribe(16)
	defer stop()
	ev := func(typ, id string, progress int) tool.JobEvent {
		return tool.JobEvent{Type: typ, Job: tool.JobInfo{TaskID: id, Progress: progress}}
	}
	q.announce("a")
	q.publish(ev(tool.JobProgress, "a", 10))
	q.publish(ev(tool.JobProgress, "b", 1))
	q.publish(ev(tool.JobCompleted, "a", 100))
	q.announced("a", &tool.JobEvent{Type: tool.JobSubmitted, Job: tool.JobInfo{TaskID: "a"}})
	q.announce("c")
	q.publish(ev(tool.JobProgress, "c", 5))
	q.announced("c", nil)
	q.publish(ev(tool.JobProgress, "a", 200))
	// Two submissions of d at once (two retries): its events are held
	// until both are over, and none is lost.
	q.announce("d")
	q.publish(ev(tool.JobProgress, "d", 1))
	q.announce("d")
	q.publish(ev(tool.JobProgress, "d", 2))
	q.announced("d", &tool.JobEvent{Type: tool.JobSubmitted, Job: tool.JobInfo{TaskID: "d"}})
	q.publish(ev(tool.JobProgress, "d", 3))
	q.announced("d", nil)
	q.publish(ev(tool.JobProgress, "d", 4))
	want := []tool.JobEvent{
		ev(tool.JobProgress, "b", 1),
		ev(tool.JobSubmitted, "a", 0),
		ev(tool.JobProgress, "a", 10),
		ev(tool.JobCompleted, "a", 100),
		ev(tool.JobProgress, "c", 5),
		ev(tool.JobProgress, "a", 200),
		ev(tool.JobSubmitted, "d", 0),
		ev(tool.JobProgress, "d", 1),
		ev(tool.JobProgress, "d", 2),
		ev(tool.JobProgress, "d", 3),
		ev(tool.JobProgress, "d", 4),
	}
	for i, w := range want {
		got := <-events
		if got.Type != w.Type || got.Job.TaskID != w.Job.TaskID || got.Job.Progress != w.Job.Progress {
			t.Fatalf("event %d = %s %s %d, want %s %s %d", i, got.Type, got.Job.TaskID, got.Job.Progress, w.Type, w.Job.TaskID, w.Job.Progress)
		}
	}
	select {
	case e := <-events:
		t.Fatalf("an event more: %+v", e)
	default:
	}
}
