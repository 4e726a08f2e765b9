package canvas

import (
	"os"
	"testing"
)

// BenchmarkPush: validating and applying the v0.8 and v0.9 test streams
// (4 and 3 lines, 22 components) on a new canvas.
func BenchmarkPush(b *testing.B) {
	v08, err := os.ReadFile("testdata/v08.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	v09, err := os.ReadFile("testdata/v09.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := catalogFor(V08); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h := New("http://127.0.0.1/canvas/")
		if _, err := h.Push("s", string(v08)); err != nil {
			b.Fatal(err)
		}
		if _, err := h.Push("s", string(v09)); err != nil {
			b.Fatal(err)
		}
	}
}
