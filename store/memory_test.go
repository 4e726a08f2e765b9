package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

func TestMemoryIndex(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		m := st.Memory()
		files := []tool.MemoryFile{
			{Path: "MEMORY.md", Stamp: "1", Chunks: []tool.MemoryChunk{
				{StartLine: 1, EndLine: 3, Title: "MEMORY Preferences", Text: "The user prefers tabs over spaces."},
				{StartLine: 4, EndLine: 9, Title: "MEMORY Deployments", Text: "Deploys run on Fridays through the staging cluster."},
			}},
			{Path: "memory/cats.md", Stamp: "2", Chunks: []tool.MemoryChunk{
				{StartLine: 1, EndLine: 2, Title: "cats", Text: "Whiskers is deployed nowhere; she sleeps."},
			}},
		}
		if err := m.Update(ctx, "/ws", files); err != nil {
			t.Fatal(err)
		}
		// Another scope with the same words stays apart.
		if err := m.Update(ctx, "/other", []tool.MemoryFile{{Path: "MEMORY.md", Stamp: "9", Chunks: []tool.MemoryChunk{{StartLine: 1, EndLine: 1, Title: "x", Text: "deploy deploy deploy"}}}}); err != nil {
			t.Fatal(err)
		}
		hits, err := m.Search(ctx, "/ws", "When do we deploy on a Friday?", 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].Path != "MEMORY.md" || hits[0].StartLine != 4 || hits[0].EndLine != 9 || hits[1].Path != "memory/cats.md" {
			t.Fatalf("hits %+v", hits)
		}
		if hits[0].Score < hits[1].Score || hits[0].Score <= 0 {
			t.Errorf("scores not best first and positive: %+v", hits)
		}
		// A title match outranks a body match of the same word.
		hits, _ = m.Search(ctx, "/ws", "cats", 5)
		if len(hits) != 1 || hits[0].Path != "memory/cats.md" {
			t.Fatalf("cats: %+v", hits)
		}
		// Query syntax is taken as words, never as FTS syntax.
		if hits, err := m.Search(ctx, "/ws", `tabs" OR NEAR( * -- '`, 5); err != nil || len(hits) != 1 || hits[0].StartLine != 1 {
			t.Fatalf("odd query: %v %+v", err, hits)
		}
		if hits, err := m.Search(ctx, "/ws", "?! the", 5); err != nil || len(hits) != 0 {
			t.Fatalf("wordless query: %v %+v", err, hits)
		}
		stamps, err := m.Stamps(ctx, "/ws")
		if err != nil || len(stamps) != 2 || stamps["MEMORY.md"] != "1" {
			t.Fatalf("%v %v", err, stamps)
		}
		// Replacing and deleting files.
		if err := m.Update(ctx, "/ws", []tool.MemoryFile{
			{Path: "MEMORY.md", Stamp: "3", Chunks: []tool.MemoryChunk{{StartLine: 1, EndLine: 1, Title: "MEMORY", Text: "Nothing about releases."}}},
			{Path: "memory/cats.md", Deleted: true},
		}); err != nil {
			t.Fatal(err)
		}
		if hits, _ := m.Search(ctx, "/ws", "deploy cats", 5); len(hits) != 0 {
			t.Fatalf("stale hits %+v", hits)
		}
		if hits, _ := m.Search(ctx, "/ws", "releases", 5); len(hits) != 1 || hits[0].Path != "MEMORY.md" {
			t.Fatalf("new content not found: %+v", hits)
		}
		stamps, _ = m.Stamps(ctx, "/ws")
		if len(stamps) != 1 || stamps["MEMORY.md"] != "3" {
			t.Fatalf("stamps %v", stamps)
		}
		if hits, _ := m.Search(ctx, "/other", "deploy", 5); len(hits) != 1 {
			t.Fatalf("other scope: %+v", hits)
		}
	})
}

func TestMemoryVectors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		m := st.Memory()
		chunk := func(line int, text string) tool.MemoryChunk {
			return tool.MemoryChunk{StartLine: line, EndLine: line, Title: "t", Text: text}
		}
		// The same text in two files is one text to embed.
		if err := m.Update(ctx, "/ws", []tool.MemoryFile{
			{Path: "a.md", Stamp: "1", Chunks: []tool.MemoryChunk{chunk(1, "alpha"), chunk(2, "shared")}},
			{Path: "b.md", Stamp: "1", Chunks: []tool.MemoryChunk{chunk(1, "shared")}},
		}); err != nil {
			t.Fatal(err)
		}
		texts, err := m.Unembedded(ctx, "/ws", "m1", 10)
		if err != nil || len(texts) != 2 || !hasTexts(texts, "alpha", "shared") || !slices.ContainsFunc(texts, func(t tool.MemoryText) bool { return t.Hash == store.ChunkHash("t", "alpha") }) {
			t.Fatalf("%v %+v", err, texts)
		}
		vec := []float32{0.5, -1.25, 3}
		if err := m.PutVectors(ctx, "/ws", "m1", []tool.MemoryVector{{Hash: store.ChunkHash("t", "alpha"), Vec: vec}, {Hash: store.ChunkHash("t", "shared"), Vec: []float32{1, 0, 0}}}); err != nil {
			t.Fatal(err)
		}
		if texts, err := m.Unembedded(ctx, "/ws", "m1", 10); err != nil || len(texts) != 0 {
			t.Fatalf("still unembedded: %v %+v", err, texts)
		}
		if texts, _ := m.Unembedded(ctx, "/ws", "m2", 10); len(texts) != 2 {
			t.Fatalf("another model has no vectors yet: %+v", texts)
		}
		all, err := m.Vectors(ctx, "/ws", "m1", nil, nil)
		if err != nil || len(all) != 3 {
			t.Fatalf("%v %+v", err, all)
		}
		for _, cv := range all {
			if cv.Path == "a.md" && len(cv.Vec) == 3 && cv.Vec[0] == 0.5 && cv.Vec[1] == -1.25 && cv.Vec[2] == 3 {
				goto stored
			}
		}
		t.Fatalf("vector not stored as given: %+v", all)
	stored:
		if got, _ := m.Vectors(ctx, "/ws", "m1", []string{"b.md"}, nil); len(got) != 1 || got[0].Path != "b.md" {
			t.Fatalf("by path: %+v", got)
		}
		if got, _ := m.Vectors(ctx, "/ws", "m1", nil, []string{store.ChunkHash("t", "shared")}); len(got) != 2 {
			t.Fatalf("by hash: %+v", got)
		}
		hits, err := m.Hits(ctx, "/ws", []int64{all[0].ID, 999999})
		if err != nil || len(hits) != 1 || hits[0].ID != all[0].ID || hits[0].Text == "" {
			t.Fatalf("%v %+v", err, hits)
		}
		if hits, _ := m.Hits(ctx, "/other", []int64{all[0].ID}); len(hits) != 0 {
			t.Fatalf("a chunk of another scope: %+v", hits)
		}
		// Indexing a.md again with alpha unchanged keeps its vector; a text
		// no chunk holds any more loses its vector, one still held keeps it.
		if err := m.Update(ctx, "/ws", []tool.MemoryFile{
			{Path: "a.md", Stamp: "2", Chunks: []tool.MemoryChunk{chunk(1, "alpha"), chunk(2, "new")}},
			{Path: "b.md", Deleted: true},
		}); err != nil {
			t.Fatal(err)
		}
		if texts, _ := m.Unembedded(ctx, "/ws", "m1", 10); len(texts) != 1 || texts[0].Text != "new" {
			t.Fatalf("after re-indexing: %+v", texts)
		}
		if got, _ := m.Vectors(ctx, "/ws", "m1", nil, []string{store.ChunkHash("t", "shared")}); len(got) != 0 {
			t.Fatalf("vector of a text no chunk holds is kept: %+v", got)
		}
		// Vectors of another model are dropped on request.
		if err := m.PutVectors(ctx, "/ws", "m2", []tool.MemoryVector{{Hash: store.ChunkHash("t", "alpha"), Vec: vec}}); err != nil {
			t.Fatal(err)
		}
		if err := m.DropVectors(ctx, "/ws", "m2"); err != nil {
			t.Fatal(err)
		}
		if got, _ := m.Vectors(ctx, "/ws", "m1", nil, nil); len(got) != 0 {
			t.Fatalf("m1 vectors kept: %+v", got)
		}
		if got, _ := m.Vectors(ctx, "/ws", "m2", nil, nil); len(got) != 1 {
			t.Fatalf("m2 vectors dropped: %+v", got)
		}
	})
}

func hasTexts(got []tool.MemoryText, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(t tool.MemoryText) bool { return t.Text == w }) {
			return false
		}
	}
	return true
}
