package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestForCallsEachIndexOnce: every index is called exactly once, for
// counts below and above the point where goroutines are started, and with
// one CPU and several.
func TestForCallsEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, MinPerWorker, 2*MinPerWorker - 1, 2 * MinPerWorker, 1000} {
			calls := make([]atomic.Int32, n)
			For(n, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d called %d times", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
