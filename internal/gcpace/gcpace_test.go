package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, scanned, headroom uint64
		base, want              int
	}{
		{6 * mb, 6 * mb, 12 * mb, 100, 200},     // a small heap gets the floor
		{6 * mb, 8 * mb, 12 * mb, 100, 150},     // stacks and globals count
		{5 * mb, 7 * mb, 10 * mb, 100, 143},     // rounded up: never under the floor
		{12 * mb, 12 * mb, 12 * mb, 100, 100},   // at the floor: the usual pace
		{100 * mb, 101 * mb, 12 * mb, 100, 100}, // a large heap keeps the usual pace
		{100 * mb, 101 * mb, 12 * mb, 150, 150}, // and the user's percentage
		{2 * mb, 3 * mb, 8 * mb, 100, 250},      // under 4 MB the runtime's minimum decides
		{0, 0, 12 * mb, 100, 100},               // no collection yet
		{1000, 1000, 12 * mb, 100, 301},         // a nearly empty heap: the minimum decides
		{1000, 1000, 12 << 30, 100, maxPercent}, // bounded
	} {
		got := percentFor(c.live, c.scanned, c.headroom, c.base)
		if got != c.want {
			t.Errorf("percentFor(%d, %d, %d, %d) = %d, want %d", c.live, c.scanned, c.headroom, c.base, got, c.want)
		}
		if got == c.want && got > c.base && got < maxPercent {
			// The runtime's goal at that percentage leaves the headroom.
			goal := max(c.live+c.scanned*uint64(got)/100, heapMinimum*uint64(got)/100)
			if goal < c.live+c.headroom || goal > c.live+c.headroom+c.scanned/50+heapMinimum/50 {
				t.Errorf("percentFor(%d, %d, %d, %d): goal %d, want about %d", c.live, c.scanned, c.headroom, c.base, goal, c.live+c.headroom)
			}
		}
	}
}

// goal is the runtime's heap goal for the next collection.
func goal() uint64 {
	m := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// current is the collector's percentage now.
func current() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestPacerFollowsTheLiveHeap: after each collection the percentage is the
// one that leaves the headroom above the live heap that collection found,
// a heap larger than the headroom gets the usual percentage back, and Stop
// restores the percentage of the start.
func TestPacerFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const headroom = 16 << 20
	type step struct {
		live    uint64
		percent int
	}
	steps := make(chan step, 100)
	p := start(headroom, time.Hour, func(live uint64, percent int) { steps <- step{live, percent} }, nil)
	if p == nil {
		t.Fatal("start returned no pacer with collection on")
	}
	defer p.Stop()
	select { // the start's own, if a collection has run before
	case <-steps:
	default:
	}
	next := func() step {
		t.Helper()
		for len(steps) > 0 { // adjustments of earlier collections
			<-steps
		}
		runtime.GC()
		select {
		case s := <-steps:
			for len(steps) > 0 { // the latest is the one in effect
				s = <-steps
			}
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("no adjustment after a collection")
			return step{}
		}
	}
	s := next()
	if s.live == 0 || s.live >= headroom {
		t.Fatalf("live heap %d: the test needs one smaller than %d", s.live, headroom)
	}
	if s.percent <= 100 || current() != s.percent {
		t.Fatalf("percent %d (in effect %d) for live heap %d, want over 100", s.percent, current(), s.live)
	}
	// The runtime's next collection is the headroom above the live heap.
	if g := goal(); g < s.live+headroom || g > s.live+headroom+headroom/20 {
		t.Fatalf("heap goal %d for live heap %d, want %d", g, s.live, s.live+headroom)
	}
	// A live heap past the headroom: the usual percentage.
	big := make([][]byte, 48)
	for i := range big {
		big[i] = make([]byte, 1<<20)
	}
	for s = next(); s.live < headroom; s = next() {
	}
	if s.percent != 100 || current() != 100 {
		t.Fatalf("percent %d (in effect %d) for live heap %d, want 100", s.percent, current(), s.live)
	}
	runtime.KeepAlive(big)
	p.Stop()
	if current() != 100 {
		t.Fatalf("after Stop the percentage is %d, want 100", current())
	}
	// Adjustments of collections before Stop (the test's allocations run
	// some of their own) may still be queued: adjust sends under the
	// pacer's lock, so once Stop has returned every one is in the channel.
	for len(steps) > 0 {
		<-steps
	}
	runtime.GC()
	runtime.GC()
	select {
	case s := <-steps:
		t.Fatalf("adjusted after Stop: %+v", s)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestStartRespectsGOGC: a GOGC in the environment is the user's choice;
// the pacer leaves it alone.
func TestStartRespectsGOGC(t *testing.T) {
	t.Setenv("GOGC", "50")
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	if p := Start(16 << 20); p != nil {
		p.Stop()
		t.Fatal("Start paced the collector although GOGC is set")
	}
	if current() != 50 {
		t.Fatalf("percentage %d, want 50", current())
	}
	t.Setenv("GOGC", "")
	debug.SetGCPercent(-1)
	if p := Start(16 << 20); p != nil {
		p.Stop()
		t.Fatal("Start paced a collector that is off")
	}
	if current() != -1 {
		t.Fatalf("percentage %d, want -1 (off)", current())
	}
}

// forced is the number of collections the program asked for.
func forced() uint64 {
	m := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// garbage allocates n bytes that are garbage at once.
func garbage(n int) {
	for ; n > 0; n -= 64 << 10 {
		b := make([]byte, 64<<10)
		b[0] = 1
		sink = b
	}
	sink = nil
}

var sink []byte

// TestPacerGivesMemoryBackAtRest: once the process has allocated and then
// stopped allocating, the pacer collects and gives the memory back, once;
// while it allocates, it never does; after Stop, it never does.
func TestPacerGivesMemoryBackAtRest(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const every = 40 * time.Millisecond
	rested := make(chan uint64, 10)
	p := start(16<<20, every, nil, func() { rested <- forced() })
	if p == nil {
		t.Fatal("start returned no pacer with collection on")
	}
	defer p.Stop()
	// Busy: 64 KB a millisecond, over 25 looks.
	before := forced()
	for end := time.Now().Add(25 * every); time.Now().Before(end); time.Sleep(time.Millisecond) {
		garbage(64 << 10)
	}
	select {
	case <-rested:
		t.Fatal("gave memory back while the process was allocating")
	default:
	}
	// At rest: memory is given back, by a collection the pacer forced.
	select {
	case n := <-rested:
		if n <= before {
			t.Fatalf("forced collections %d → %d: giving memory back forced none", before, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the process rested, the memory was not given back")
	}
	// Still at rest, nothing allocated since: not again.
	select {
	case <-rested:
		t.Fatal("gave memory back twice without allocating in between")
	case <-time.After(8 * every):
	}
	// Allocating and resting again: again.
	garbage(4 << 20)
	select {
	case <-rested:
	case <-time.After(10 * time.Second):
		t.Fatal("the process rested a second time, the memory was not given back")
	}
	// Stopped: never.
	p.Stop()
	garbage(4 << 20)
	select {
	case <-rested:
		t.Fatal("gave memory back after Stop")
	case <-time.After(8 * every):
	}
}
