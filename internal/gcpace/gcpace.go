// Package gcpace keeps a floor under the garbage collector's headroom: the
// heap a process may allocate between two collections.
//
// The Go runtime starts the next collection when the heap has grown by
// GOGC percent of the live heap (100%), or at 4 MB for a smaller heap. A
// server whose live heap is a few megabytes and whose requests each leave
// hundreds of kilobytes of garbage (the MCP SDK's JSON decoder allocates a
// 32 KB buffer per message it decodes, several per request) then collects
// every dozen requests, and each collection marks the whole live heap and
// the binary's globals again. With a floor of a few megabytes of headroom,
// collections become a fraction as frequent; a heap larger than the floor
// keeps the usual percentage, so the floor is the most the pacing adds to
// a process's memory.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// percentFor is the GOGC percentage that sets the next collection at
// headroom bytes above a live heap of live bytes, and never less than
// base. The runtime sets that collection's heap goal at
// live + scanned·GOGC/100, where scanned is the live heap plus the
// goroutine stacks and the globals it scans, but at least at
// 4 MB·GOGC/100.
func percentFor(live, scanned, headroom uint64, base int) int {
	if scanned == 0 {
		return base
	}
	p := ceilDiv(headroom*100, scanned)
	p = min(p, ceilDiv((live+headroom)*100, heapMinimum), maxPercent)
	return max(base, int(p))
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// heapMinimum is the runtime's smallest heap goal at GOGC=100.
const heapMinimum = 4 << 20

// maxPercent bounds the percentage for a nearly empty heap.
const maxPercent = 10_000

// Pacer sets the collector's percentage after each collection, from the
// live heap that collection found.
type Pacer struct {
	headroom uint64
	base     int
	mu       sync.Mutex
	stopped  bool
	sample   []metrics.Sample
	// adjusted, when set, is told each percentage set (tests).
	adjusted func(live uint64, percent int)
}

// Start keeps at least headroom bytes between the live heap and the next
// collection, from now until Stop. It does nothing, and returns nil, when
// the GOGC environment variable is set (the user chose the pace) or
// headroom is 0. The percentage it sets is never below the one in effect
// when it starts; Stop restores that one.
func Start(headroom uint64) *Pacer {
	if headroom == 0 || os.Getenv("GOGC") != "" {
		return nil
	}
	return start(headroom, nil)
}

func start(headroom uint64, adjusted func(uint64, int)) *Pacer {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		return nil // collection is off: nothing to pace
	}
	p := &Pacer{headroom: headroom, base: base, adjusted: adjusted,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	p.adjust()
	p.arm()
	return p
}

// sentinel is garbage the moment it is made: its cleanup runs after the
// collection that finds it, and arms the next one.
type sentinel struct {
	p *Pacer
	_ [2]uintptr // not a tiny allocation, whose cleanup could be late
}

func (p *Pacer) arm() {
	s := &sentinel{p: p}
	runtime.AddCleanup(s, func(p *Pacer) {
		if p.adjust() {
			p.arm()
		}
	}, p)
}

// adjust sets the percentage for the live heap the last collection found;
// it reports false once the pacer is stopped.
func (p *Pacer) adjust() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	metrics.Read(p.sample)
	var v [3]uint64
	for i, m := range p.sample {
		if m.Value.Kind() == metrics.KindUint64 {
			v[i] = m.Value.Uint64()
		}
	}
	live := v[0]
	if live == 0 {
		return true // no collection yet: nothing to go by
	}
	percent := percentFor(live, live+v[1]+v[2], p.headroom, p.base)
	debug.SetGCPercent(percent)
	if p.adjusted != nil {
		p.adjusted(live, percent)
	}
	return true
}

// Stop restores the percentage in effect when the pacer started. A nil
// Pacer's Stop does nothing.
func (p *Pacer) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.stopped = true
		debug.SetGCPercent(p.base)
	}
}
