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
//
// That headroom fills with garbage that only the next collection frees,
// and a server that has gone quiet may not collect again for minutes: so
// once a process has stopped allocating for a few seconds, the pacer
// collects and gives the memory back to the system (see Pacer).
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
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

// At rest: the pacer looks at the process's allocations every restEvery;
// after restQuiet looks in a row that each found less than quietBytes
// allocated, if at least restWorth bytes were allocated since it last gave
// memory back, it collects and gives back what the heap does not use
// (debug.FreeOSMemory). A server answering calls allocates hundreds of
// kilobytes a second; an idle one, nothing.
const (
	restEvery  = time.Second
	restQuiet  = 3
	quietBytes = 64 << 10
	restWorth  = 2 << 20
)

// Pacer sets the collector's percentage after each collection, from the
// live heap that collection found, and gives the heap's unused memory back
// to the system when the process rests.
type Pacer struct {
	headroom uint64
	base     int
	mu       sync.Mutex
	stopped  bool
	sample   []metrics.Sample
	done     chan struct{}
	// adjusted, when set, is told each percentage set (tests).
	adjusted func(live uint64, percent int)
	// rested, when set, is told each time memory was given back (tests).
	rested func()
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
	return start(headroom, restEvery, nil, nil)
}

// start is Start with the interval of the looks at rest (every) and the
// tests' hooks.
func start(headroom uint64, every time.Duration, adjusted func(uint64, int), rested func()) *Pacer {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		return nil // collection is off: nothing to pace
	}
	p := &Pacer{headroom: headroom, base: base, adjusted: adjusted, rested: rested, done: make(chan struct{}),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	p.adjust()
	p.arm()
	go p.watchRest(every)
	return p
}

// watchRest gives the heap's unused memory back to the system each time
// the process has stopped allocating for restQuiet looks, every apart,
// after allocating restWorth bytes or more since the last time, until
// Stop.
func (p *Pacer) watchRest(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	read := func() uint64 {
		metrics.Read(allocs)
		return allocs[0].Value.Uint64()
	}
	last := read()
	since, quiet := uint64(0), 0
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		now := read()
		step := now - last
		last = now
		since += step
		if step >= quietBytes {
			quiet = 0
			continue
		}
		if quiet++; quiet < restQuiet || since < restWorth {
			continue
		}
		if !p.giveBack() {
			return
		}
		since, quiet = 0, 0
		last = read() // the collection's own allocations are not the process's
	}
}

// giveBack collects and gives the heap's unused memory back to the
// system, under the pacer's lock: once Stop has returned, none begins. It
// reports false once the pacer is stopped.
func (p *Pacer) giveBack() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	debug.FreeOSMemory() // the collection's adjust waits for the lock
	if p.rested != nil {
		p.rested()
	}
	return true
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
		close(p.done)
		debug.SetGCPercent(p.base)
	}
}
