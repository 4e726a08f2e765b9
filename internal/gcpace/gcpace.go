// Package gcpace paces the garbage collector of a long-running server
// whose live heap is small.
//
// The runtime starts a collection when the heap has grown by GOGC percent
// of what the last one left alive, and never below 4 MiB × GOGC/100. A
// server whose live heap is a megabyte or two, and whose every call leaves
// tens of kilobytes of garbage (decoding, encoding, the audit), collects
// every few dozen calls then; each collection takes one of the process's
// processors for its marking, which is what a call's slowest latencies are
// made of on a machine with two. Keep raises the goal to a floor while the
// live heap is small and leaves the usual pace (goal twice the live heap)
// once the live heap is large enough to reach the floor on its own: the
// cost is the floor in memory under load, bounded, and nothing when idle.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the heap goal a server keeps at least: 16 MiB, which
// collects about once per 150 calls of a small tool instead of once per 15.
const DefaultFloor = 16 << 20

// heapMinimum is the runtime's smallest heap goal at GOGC=100; it scales
// with GOGC.
const heapMinimum = 4 << 20

// basePercent is the pace Keep returns to, the runtime's default GOGC.
const basePercent = 100

const liveMetric = "/gc/heap/live:bytes"

var (
	mu    sync.Mutex
	gen   uint64 // the pacing in force; a cleanup of an older one stops
	floor uint64 // 0 when not pacing
	last  int    // the percent last set
)

// Keep keeps the collector's heap goal at floor bytes or more until Stop,
// retuning after every collection from the heap the collection found
// alive. It does nothing when the GOGC environment variable is set: the
// operator chose the pace. A memory limit (GOMEMLIMIT) still bounds the
// heap. Calling Keep again replaces the floor.
func Keep(f uint64) {
	if os.Getenv("GOGC") != "" || f == 0 {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	gen++
	floor = f
	last = -1
	tuneLocked()
	arm(gen)
}

// Stop ends the pacing Keep began, restores the runtime's default pace
// and reports whether there was a pacing to end.
func Stop() bool {
	mu.Lock()
	defer mu.Unlock()
	if floor == 0 {
		return false
	}
	gen++
	floor = 0
	debug.SetGCPercent(basePercent)
	return true
}

// sentinel is an object nothing refers to: its cleanup runs after the
// collection that finds it unreachable, once per collection.
type sentinel struct{ _ *byte }

// arm registers the cleanup that retunes after the next collection and
// arms the one after it.
func arm(g uint64) {
	runtime.AddCleanup(&sentinel{}, after, g)
}

// after runs after a collection: it retunes and arms the next, unless the
// pacing of generation g has ended.
func after(g uint64) {
	mu.Lock()
	defer mu.Unlock()
	if g != gen || floor == 0 {
		return
	}
	tuneLocked()
	arm(g)
}

// tuneLocked sets the percent that makes the goal the floor for the
// current live heap, or the base pace when the live heap reaches it alone.
func tuneLocked() {
	s := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(s)
	var live uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	if p := Percent(floor, live); p != last {
		debug.SetGCPercent(p)
		last = p
	}
}

// Percent is the GOGC that makes the runtime's heap goal the floor for a
// live heap of live bytes, and never less than the default 100. The goal
// is max(4 MiB × GOGC/100, live × (1 + GOGC/100)), plus a GOGC share of
// the goroutines' stacks and the globals, small beside it.
func Percent(floor, live uint64) int {
	byMinimum := 100 * floor / heapMinimum
	byLive := uint64(0)
	if live == 0 {
		byLive = byMinimum
	} else if floor > live {
		byLive = 100*floor/live - 100
	}
	return max(basePercent, int(min(byMinimum, byLive)))
}
