package store_test

import (
	"context"
	"testing"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/store/storetest"
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
