package memory

import (
	"math/rand/v2"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// BenchmarkNearest measures the vector half of a hybrid search alone: the
// 30 nearest of 30,000 chunk vectors (10,000 notes) of 256 and 1,536
// dimensions.
func BenchmarkNearest(b *testing.B) {
	for _, dims := range []int{256, 1536} {
		r := rand.New(rand.NewPCG(5, 6))
		vec := func() []float32 {
			v := make([]float32, dims)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			return v
		}
		var found []tool.MemoryChunkVector
		for i := range 30000 {
			found = append(found, tool.MemoryChunkVector{ID: int64(i), Path: "p", Vec: vec()})
		}
		vs := newVectors()
		vs.add(found, nil)
		q := normalized(vec())
		b.Run(map[int]string{256: "256dims", 1536: "1536dims"}[dims], func(b *testing.B) {
			for b.Loop() {
				vs.nearest(q, 30, -1)
			}
		})
	}
}

// The in-memory set follows files indexed again: their old vectors go (the
// last vector takes a removed one's place), new ones come, and the scan
// finds the nearest among what is there.
func TestVectorSetFollowsChanges(t *testing.T) {
	t.Parallel()
	unit := func(i int) []float32 {
		v := make([]float32, 4)
		v[i] = 2 // normalized on the way in
		return v
	}
	vs := newVectors()
	vs.add([]tool.MemoryChunkVector{{ID: 1, Path: "a", Vec: unit(0)}, {ID: 2, Path: "b", Vec: unit(1)}, {ID: 3, Path: "c", Vec: unit(2)}, {ID: 4, Path: "c", Vec: unit(3)}}, nil)
	if got := vs.nearest(unit(1), 2, 0.5); len(got) != 1 || got[0] != 2 {
		t.Fatalf("nearest %v", got)
	}
	// a is indexed again with another vector; b is removed.
	vs.add([]tool.MemoryChunkVector{{ID: 5, Path: "a", Vec: unit(1)}, {ID: 6, Path: "x", Vec: []float32{1, 2}}}, []string{"a", "b"})
	if got := vs.nearest(unit(1), 3, 0.5); len(got) != 1 || got[0] != 5 {
		t.Fatalf("after changes: %v", got)
	}
	if got := vs.nearest(unit(0), 3, 0.5); len(got) != 0 {
		t.Fatalf("a removed vector is found: %v", got)
	}
	if got := vs.nearest(unit(3), 3, 0.5); len(got) != 1 || got[0] != 4 {
		t.Fatalf("a moved vector: %v", got)
	}
	if len(vs.flat.ids) != 3 || len(vs.flat.data) != 12 {
		t.Fatalf("slab holds %d ids, %d floats (a vector of another length is left out)", len(vs.flat.ids), len(vs.flat.data))
	}
	// Ties go by id, whatever the order in the slab.
	vs.add([]tool.MemoryChunkVector{{ID: 0, Path: "y", Vec: unit(3)}}, nil)
	if got := vs.nearest(unit(3), 1, 0.5); len(got) != 1 || got[0] != 0 {
		t.Fatalf("tie: %v", got)
	}
}
