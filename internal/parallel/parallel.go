// Package parallel runs independent pieces of CPU-bound work on every CPU.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// MinPerWorker is how many calls each goroutine of For must have to make:
// below it, starting goroutines costs more than it saves.
const MinPerWorker = 32

// For calls fn(i) for every i in [0, n) and returns when every call has.
// When n is large enough it runs them on as many goroutines as there are
// CPUs (fn must be safe to call concurrently for different i); otherwise
// in order on the caller's goroutine.
func For(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/MinPerWorker)
	if workers < 2 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}
