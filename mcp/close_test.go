package mcp_test

import (
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// subscriptions is a job queue that only counts the subscriptions to its
// events still open.
type subscriptions struct {
	tool.Jobs
	mu   sync.Mutex
	open int
}

func (q *subscriptions) Subscribe(int) (<-chan tool.JobEvent, func()) {
	ch := make(chan tool.JobEvent)
	q.mu.Lock()
	q.open++
	q.mu.Unlock()
	return ch, sync.OnceFunc(func() {
		q.mu.Lock()
		q.open--
		q.mu.Unlock()
		close(ch)
	})
}

// TestCloseReleasesRunners: the server's pipelines subscribe to the job
// queue's events; Close releases them, compact mode's front one too.
func TestCloseReleasesRunners(t *testing.T) {
	t.Parallel()
	for _, compact := range []bool{false, true} {
		q := &subscriptions{}
		srv := mcp.New(registry.New(), &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog, Compact: compact}, invoke.WithJobs(q))
		srv.Close()
		q.mu.Lock()
		if q.open != 0 {
			t.Errorf("compact %v: %d subscriptions open after Close", compact, q.open)
		}
		q.mu.Unlock()
	}
}
