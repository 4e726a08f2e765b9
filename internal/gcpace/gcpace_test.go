package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live uint64
		want        int
	}{
		{16 * mib, 3 * mib / 2, 400}, // the runtime's minimum reaches the floor
		{16 * mib, 6 * mib, 166},     // the live heap's share does
		{16 * mib, 10 * mib, 100},    // twice the live heap is above the floor
		{16 * mib, 16 * mib, 100},
		{16 * mib, 0, 400},
		{8 * mib, mib, 200},
		{2 * mib, mib, 100}, // a floor under the runtime's minimum changes nothing
	} {
		if got := Percent(c.floor, c.live); got != c.want {
			t.Errorf("Percent(%d MiB, %.1f MiB) = %d, want %d", c.floor/mib, float64(c.live)/mib, got, c.want)
		}
		if p := Percent(c.floor, c.live); p > 100 {
			goal := max(heapMinimum*uint64(p)/100, c.live*(100+uint64(p))/100)
			if goal+mib/8 < c.floor || goal > c.floor+mib/8 {
				t.Errorf("floor %d, live %d: percent %d gives a goal of %d", c.floor, c.live, p, goal)
			}
		}
	}
}

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitPercent collects until the pace is want: the retuning runs after a
// collection, on the runtime's cleanup goroutine.
func waitPercent(t *testing.T, want uint64) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if read("/gc/gogc:percent") == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("GOGC is %d, want %d", read("/gc/gogc:percent"), want)
}

var kept [][]byte

func TestKeepFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	Keep(DefaultFloor)
	defer Stop()
	waitPercent(t, 400)
	if goal := read("/gc/heap/goal:bytes"); goal < DefaultFloor {
		t.Errorf("heap goal %d while pacing, want at least %d", goal, DefaultFloor)
	}

	// A live heap that reaches the floor alone gets the usual pace.
	for range 40 {
		kept = append(kept, make([]byte, 1<<20))
	}
	waitPercent(t, 100)
	kept = nil
	waitPercent(t, 400)

	// Stopped, the pace is the default and stays what is set.
	if !Stop() {
		t.Error("Stop says there was no pacing")
	}
	if Stop() {
		t.Error("a second Stop says there was a pacing")
	}
	if p := debug.SetGCPercent(123); p != 100 {
		t.Errorf("GOGC after Stop %d, want 100", p)
	}
	for range 3 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	if p := read("/gc/gogc:percent"); p != 123 {
		t.Errorf("GOGC %d after Stop and collections, want 123 (still retuned)", p)
	}
}

func TestKeepLeavesAChosenGOGC(t *testing.T) {
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	Keep(DefaultFloor)
	if Stop() {
		t.Error("Keep paced with GOGC set")
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	if p := read("/gc/gogc:percent"); p != 150 {
		t.Errorf("GOGC %d with GOGC=150 in the environment, want 150", p)
	}
}
