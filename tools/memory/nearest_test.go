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
		vs := &vectors{entries: map[int64]vecEntry{}, paths: map[string][]int64{}}
		vs.add(found, nil)
		q := normalized(vec())
		b.Run(map[int]string{256: "256dims", 1536: "1536dims"}[dims], func(b *testing.B) {
			for b.Loop() {
				vs.nearest(q, 30, -1)
			}
		})
	}
}
