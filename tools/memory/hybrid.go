package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Hybrid search: the keyword index's best chunks and the chunks whose
// vectors are nearest the query's are merged by reciprocal rank fusion
// (RRF): a chunk scores the sum of 1/(rrfK + rank) over the two lists it is
// in. Ranks rather than scores are merged because BM25 scores and cosine
// similarities are on scales that cannot be compared, and differ between
// corpora and models; RRF needs no tuning per model and keeps a chunk
// found by both ways above one found by either.
const rrfK = 60

// candidates is how many chunks each way contributes to the fusion, at
// least.
const candidates = 30

// DefaultRetryAfter is how long an Indexer leaves an embedding provider
// alone after it failed, searching by keywords only meanwhile.
const DefaultRetryAfter = 30 * time.Second

// embedding is an embedding provider as the indexer uses it: the client,
// when it last failed, and the vectors of recent queries.
type embedding struct {
	emb     Embedder
	minSim  float32
	mu      sync.Mutex
	failed  time.Time
	failErr error
	queries map[string][]float32
}

// queryCacheSize bounds the query vectors kept per provider.
const queryCacheSize = 256

// embedderFor returns the indexer's client for c, made once per settings.
func (ix *Indexer) embedderFor(c Embeddings) (*embedding, error) {
	key, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	ix.emu.Lock()
	defer ix.emu.Unlock()
	if e := ix.embedders[string(key)]; e != nil {
		return e, nil
	}
	emb, err := NewEmbedder(c)
	if err != nil {
		return nil, fmt.Errorf("tools.memory.%w", err)
	}
	minSim := float32(0.25)
	if c.MinSimilarity != 0 {
		minSim = float32(c.MinSimilarity)
	}
	e := &embedding{emb: emb, minSim: minSim, queries: map[string][]float32{}}
	if ix.embedders == nil {
		ix.embedders = map[string]*embedding{}
	}
	ix.embedders[string(key)] = e
	return e, nil
}

// resting returns why the provider is not to be asked now, or nil.
func (e *embedding) resting(retryAfter time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failErr != nil && time.Since(e.failed) < retryAfter {
		return fmt.Errorf("%w (it failed %s ago; it is asked again %s after a failure)", e.failErr, time.Since(e.failed).Round(time.Second), retryAfter)
	}
	return nil
}

func (e *embedding) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed, e.failErr = time.Now(), err
}

func (e *embedding) ok() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failErr = nil
}

// query returns the vector of a query, normalized.
func (e *embedding) query(ctx context.Context, q string) ([]float32, error) {
	e.mu.Lock()
	v, ok := e.queries[q]
	e.mu.Unlock()
	if ok {
		return v, nil
	}
	vs, err := e.emb.Embed(ctx, []string{q}, Query)
	if err != nil {
		return nil, err
	}
	v = normalized(vs[0])
	e.mu.Lock()
	if len(e.queries) >= queryCacheSize {
		clear(e.queries)
	}
	e.queries[q] = v
	e.mu.Unlock()
	return v, nil
}

func normalized(v []float32) []float32 {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(n))
	for i, f := range v {
		out[i] = f * inv
	}
	return out
}

// vectors is a workspace's chunk vectors of one model, in memory, kept in
// step with the index: the files a scan indexed again are read again, and
// the chunks whose texts were embedded.
type vectors struct {
	mu      sync.Mutex // held while the set is brought up to date
	loaded  bool
	pending bool // some chunks may have no vector yet
	paths   map[string][]int64

	flatMu sync.RWMutex // held to change flat, and to read it
	flat   slab
}

// slab is vectors of one length (the model's) laid end to end, normalized,
// for a scan that reads memory in order. A removed vector's place is taken
// by the last one.
type slab struct {
	dims int
	ids  []int64
	data []float32     // len(ids) * dims
	at   map[int64]int // index of each id
}

func newVectors() *vectors {
	return &vectors{paths: map[string][]int64{}, flat: slab{at: map[int64]int{}}}
}

func (ix *Indexer) vectorsOf(workspace, model string) *vectors {
	ix.emu.Lock()
	defer ix.emu.Unlock()
	key := workspace + "\x00" + model
	if v := ix.vecs[key]; v != nil {
		return v
	}
	if ix.vecs == nil {
		ix.vecs = map[string]*vectors{}
	}
	v := newVectors()
	ix.vecs[key] = v
	return v
}

// add puts chunk vectors in the set; with paths, the chunks those files
// had before are dropped first. A vector whose length is not the set's
// (left from other settings) is left out.
func (vs *vectors) add(found []tool.MemoryChunkVector, paths []string) {
	vs.flatMu.Lock()
	defer vs.flatMu.Unlock()
	f := &vs.flat
	for _, p := range paths {
		for _, id := range vs.paths[p] {
			f.remove(id)
		}
		delete(vs.paths, p)
	}
	for _, cv := range found {
		if _, ok := f.at[cv.ID]; ok {
			continue
		}
		if f.dims == 0 {
			f.dims = len(cv.Vec)
		}
		if len(cv.Vec) != f.dims {
			continue
		}
		f.at[cv.ID] = len(f.ids)
		f.ids = append(f.ids, cv.ID)
		f.data = append(f.data, normalized(cv.Vec)...)
		vs.paths[cv.Path] = append(vs.paths[cv.Path], cv.ID)
	}
}

func (f *slab) remove(id int64) {
	i, ok := f.at[id]
	if !ok {
		return
	}
	last := len(f.ids) - 1
	if i != last {
		f.ids[i] = f.ids[last]
		copy(f.data[i*f.dims:(i+1)*f.dims], f.data[last*f.dims:])
		f.at[f.ids[i]] = i
	}
	f.ids = f.ids[:last]
	f.data = f.data[:last*f.dims]
	delete(f.at, id)
}

// embedBatches is how many batches of texts one round of embedding asks
// the index for at once.
const embedBatches = 4

// refresh brings vs in step with the index after a scan that indexed the
// files changed again, embedding the chunk texts that have no vector yet.
// It returns the error of the provider, if any; vs stays usable for the
// chunks it has.
func (ix *Indexer) refresh(ctx context.Context, mv Vectors, e *embedding, vs *vectors, workspace string, changed []string) (embedErr, err error) {
	model := e.emb.Model()
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if !vs.loaded {
		if err := mv.DropVectors(ctx, workspace, model); err != nil {
			return nil, err
		}
		all, err := mv.Vectors(ctx, workspace, model, nil, nil)
		if err != nil {
			return nil, err
		}
		vs.add(all, nil)
		vs.loaded, vs.pending = true, true
	} else if len(changed) > 0 {
		found, err := mv.Vectors(ctx, workspace, model, changed, nil)
		if err != nil {
			return nil, err
		}
		vs.add(found, changed)
		vs.pending = true
	}
	if !vs.pending {
		return nil, nil
	}
	if err := e.resting(ix.retryAfter()); err != nil {
		return err, nil
	}
	for {
		texts, err := mv.Unembedded(ctx, workspace, model, embedBatches*64)
		if err != nil {
			return nil, err
		}
		if len(texts) == 0 {
			vs.pending = false
			e.ok()
			return nil, nil
		}
		in := make([]string, len(texts))
		hashes := make([]string, len(texts))
		for i, t := range texts {
			in[i] = embedInput(t.Title, t.Text)
			hashes[i] = t.Hash
		}
		got, err := e.emb.Embed(ctx, in, Document)
		if err != nil {
			if ctx.Err() == nil {
				e.fail(err)
			}
			return err, nil
		}
		put := make([]tool.MemoryVector, len(texts))
		for i, t := range texts {
			put[i] = tool.MemoryVector{Hash: t.Hash, Vec: got[i]}
		}
		if err := mv.PutVectors(ctx, workspace, model, put); err != nil {
			return nil, err
		}
		found, err := mv.Vectors(ctx, workspace, model, nil, hashes)
		if err != nil {
			return nil, err
		}
		vs.add(found, nil)
	}
}

// embedInput is the text embedded for a chunk: its title (the file's name
// and heading) and its text.
func embedInput(title, text string) string {
	return title + "\n\n" + text
}

// nearest returns the ids of up to n chunks whose vectors are nearest q,
// with at least minSim cosine similarity, nearest first. Large sets are
// scanned in parallel, a part per processor.
func (vs *vectors) nearest(q []float32, n int, minSim float32) []int64 {
	vs.flatMu.RLock()
	defer vs.flatMu.RUnlock()
	f := &vs.flat
	if f.dims != len(q) || len(f.ids) == 0 {
		return nil
	}
	parts := 1
	if len(f.ids) >= 4096 {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	results := make([][]scored, parts)
	var wg sync.WaitGroup
	per := (len(f.ids) + parts - 1) / parts
	for p := range parts {
		lo, hi := p*per, min((p+1)*per, len(f.ids))
		wg.Go(func() { results[p] = f.top(q, lo, hi, n, minSim) })
	}
	wg.Wait()
	var best []scored
	for _, r := range results {
		best = append(best, r...)
	}
	slices.SortFunc(best, nearer)
	ids := make([]int64, 0, n)
	for _, b := range best[:min(n, len(best))] {
		ids = append(ids, b.id)
	}
	return ids
}

type scored struct {
	id  int64
	sim float32
}

// nearer orders by similarity, nearest first, and equal similarities by id
// (so that ties do not depend on the order of the set).
func nearer(a, b scored) int {
	if c := cmp.Compare(b.sim, a.sim); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// top returns the n vectors of f from lo to hi nearest q, at least minSim,
// nearest first.
func (f *slab) top(q []float32, lo, hi, n int, minSim float32) []scored {
	best := make([]scored, 0, n+1) // sorted, nearest first
	floor := minSim
	for i := lo; i < hi; i++ {
		s := dot(q, f.data[i*f.dims:(i+1)*f.dims])
		if s < floor {
			continue
		}
		c := scored{f.ids[i], s}
		j, _ := slices.BinarySearchFunc(best, c, nearer)
		if len(best) == n && j == n {
			continue // a tie with the last, and a greater id
		}
		best = slices.Insert(best, j, c)
		if len(best) > n {
			best = best[:n]
		}
		if len(best) == n {
			floor = max(minSim, best[n-1].sim)
		}
	}
	return best
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// fuse merges the keyword hits and the vector candidates (ids, nearest
// first) by reciprocal rank fusion and returns the ids of the best limit,
// with their scores.
func fuse(keyword []tool.MemoryHit, vector []int64, limit int) ([]int64, map[int64]float64) {
	score := map[int64]float64{}
	for r, h := range keyword {
		score[h.ID] += 1 / float64(rrfK+r+1)
	}
	for r, id := range vector {
		score[id] += 1 / float64(rrfK+r+1)
	}
	ids := make([]int64, 0, len(score))
	for id := range score {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids, score
}

// hybrid searches by keywords and by vectors and merges the two. It
// returns a note instead of vector results when the provider cannot help.
func (ix *Indexer) hybrid(ctx context.Context, idx Index, e *embedding, workspace, query string, limit int, changed []string) ([]tool.MemoryHit, string, error) {
	n := max(limit*3, candidates)
	keyword, err := idx.Search(ctx, workspace, query, n)
	if err != nil {
		return nil, "", err
	}
	mv, ok := idx.(Vectors)
	if !ok {
		return trim(keyword, limit), "this memory index keeps no vectors: keyword search only", nil
	}
	vs := ix.vectorsOf(workspace, e.emb.Model())
	embedErr, err := ix.refresh(ctx, mv, e, vs, workspace, changed)
	if err != nil {
		return nil, "", err
	}
	if embedErr == nil {
		embedErr = e.resting(ix.retryAfter())
	}
	var q []float32
	if embedErr == nil {
		if q, embedErr = e.query(ctx, query); embedErr != nil && ctx.Err() == nil {
			e.fail(embedErr)
		}
	}
	if embedErr != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return trim(keyword, limit), "the embedding provider failed, so this is keyword search only: " + embedErr.Error(), nil
	}
	ids, score := fuse(keyword, vs.nearest(q, n, e.minSim), limit)
	byID := map[int64]tool.MemoryHit{}
	var missing []int64
	for _, h := range keyword {
		byID[h.ID] = h
	}
	for _, id := range ids {
		if _, ok := byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		more, err := mv.Hits(ctx, workspace, missing)
		if err != nil {
			return nil, "", err
		}
		for _, h := range more {
			byID[h.ID] = h
		}
	}
	hits := make([]tool.MemoryHit, 0, len(ids))
	for _, id := range ids {
		h, ok := byID[id]
		if !ok {
			continue // its file was indexed again meanwhile
		}
		h.Score = score[id]
		hits = append(hits, h)
	}
	return hits, "", nil
}

func trim(hits []tool.MemoryHit, limit int) []tool.MemoryHit {
	if len(hits) > limit {
		return hits[:limit]
	}
	return hits
}
