package memory_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/memory/embedtest"
)

// hybridConfig is the memory settings of an OpenAI-style provider at srv.
func hybridConfig(srv *embedtest.Server) memory.Config {
	return memory.Config{Embeddings: memory.Embeddings{Provider: "openai", BaseURL: srv.URL + "/v1", APIKeyEnv: "-", MaxRetries: -1}}
}

// modelOf is the model key the indexer stores vectors under for cfg.
func modelOf(t *testing.T, cfg memory.Config) string {
	t.Helper()
	emb, err := memory.NewEmbedder(cfg.Embeddings)
	if err != nil {
		t.Fatal(err)
	}
	return emb.Model()
}

func TestHybridStoresVectorsAndEmbedsOnlyChangedText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := embedtest.Start()
	defer srv.Close()
	cfg := hybridConfig(srv)
	ws := t.TempDir()
	st := openStore(t)
	idx := st.Memory()
	write(t, ws, "MEMORY.md", "# Pets\nThe cat is called Miso.\n\n# Garden\nTomatoes planted in April.\n")
	write(t, ws, "memory/work.md", "# Deploys\nDeploys run on Fridays.\n")
	ix := memory.NewIndexer(0)
	found, err := ix.Find(ctx, idx, ws, "Miso", 5, cfg)
	if err != nil || found.Mode != "hybrid" || found.Note != "" || len(found.Hits) == 0 || found.Hits[0].Path != "MEMORY.md" {
		t.Fatalf("%v %+v", err, found)
	}
	// Three chunks and the query were embedded, and the chunks' vectors
	// are in the store.
	if got := len(srv.Texts()); got != 4 {
		t.Fatalf("%d texts embedded, want 3 chunks and 1 query: %q", got, srv.Texts())
	}
	vecs, err := idx.Vectors(ctx, ws, modelOf(t, cfg), nil, nil)
	if err != nil || len(vecs) != 3 || len(vecs[0].Vec) != embedtest.Dims {
		t.Fatalf("stored vectors: %v %d", err, len(vecs))
	}
	// Another search with nothing changed embeds the query only.
	if _, err := ix.Find(ctx, idx, ws, "tomatoes", 5, cfg); err != nil || len(srv.Texts()) != 5 {
		t.Fatalf("%v: %d texts embedded, want 5", err, len(srv.Texts()))
	}
	// One section of MEMORY.md changes: only it is embedded again, though
	// the whole file is indexed again.
	write(t, ws, "MEMORY.md", "# Pets\nThe cat is called Miso.\n\n# Garden\nPotatoes planted in May.\n")
	if _, err := ix.Find(ctx, idx, ws, "potatoes", 5, cfg); err != nil {
		t.Fatal(err)
	}
	texts := srv.Texts()
	if len(texts) != 7 || !strings.Contains(texts[5], "Potatoes planted in May") || texts[6] != "potatoes" {
		t.Fatalf("after a change, embedded %q, want the changed chunk and the query", texts[5:])
	}
	// A new process (a new indexer) over the same store embeds nothing
	// but its query.
	requests := srv.Requests()
	found, err = memory.NewIndexer(0).Find(ctx, idx, ws, "deploys friday", 5, cfg)
	if err != nil || found.Mode != "hybrid" || len(found.Hits) == 0 || found.Hits[0].Path != "memory/work.md" || srv.Requests() != requests+1 {
		t.Fatalf("%v %+v, %d requests, want 1", err, found, srv.Requests()-requests)
	}
	// Hits are snippets with their path, lines and a score, best first.
	for i, h := range found.Hits {
		if h.StartLine < 1 || h.EndLine < h.StartLine || h.Snippet == "" || h.Score <= 0 || i > 0 && h.Score > found.Hits[i-1].Score {
			t.Errorf("hit %d: %+v", i, h)
		}
	}
}

func TestHybridFindsWhatKeywordsMiss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := embedtest.Start()
	defer srv.Close()
	ws := copyCorpus(t)
	write(t, ws, "memory/weekend.md", "# Weekend\nWe watched a film about lighthouses.\n")
	idx := openStore(t).Memory()
	ix := memory.NewIndexer(0)
	// No word of the query is in the note, nor any of their stems.
	const query = "cinema"
	keyword, err := ix.Find(ctx, idx, ws, query, 3, memory.Config{})
	if err != nil || keyword.Mode != "keyword" {
		t.Fatalf("%v %+v", err, keyword)
	}
	for _, h := range keyword.Hits {
		if h.Path == "memory/weekend.md" {
			t.Fatalf("keyword search found the note: %+v", keyword.Hits)
		}
	}
	hybrid, err := ix.Find(ctx, idx, ws, query, 3, hybridConfig(srv))
	if err != nil || hybrid.Mode != "hybrid" || len(hybrid.Hits) == 0 || hybrid.Hits[0].Path != "memory/weekend.md" || !strings.Contains(hybrid.Hits[0].Snippet, "film") {
		t.Fatalf("hybrid: %v %+v", err, hybrid)
	}
	// The vectors follow the files: a new note is found the same way, a
	// removed one no more.
	write(t, ws, "memory/friday.md", "# Friday\nMovie night at Ana's.\n")
	if err := os.Remove(filepath.Join(ws, "memory/weekend.md")); err != nil {
		t.Fatal(err)
	}
	hybrid, err = ix.Find(ctx, idx, ws, query, 3, hybridConfig(srv))
	if err != nil || hybrid.Mode != "hybrid" || len(hybrid.Hits) == 0 || hybrid.Hits[0].Path != "memory/friday.md" || slices.Contains(paths(hybrid.Hits), "memory/weekend.md") {
		t.Fatalf("after changes: %v %+v", err, hybrid)
	}
}

func TestHybridFallsBackToKeywordsWhenTheProviderFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := embedtest.Start()
	defer srv.Close()
	ws := copyCorpus(t)
	st := openStore(t)
	cfg := hybridConfig(srv)
	srv.Fail.Store(http.StatusInternalServerError)
	ix := memory.NewIndexer(0)
	found, err := ix.Find(ctx, st.Memory(), ws, "dentist appointment", 3, cfg)
	if err != nil || found.Mode != "keyword" || !strings.Contains(found.Note, "keyword search only") || !strings.Contains(found.Note, "HTTP 500") ||
		len(found.Hits) == 0 || found.Hits[0].Path != "memory/dentist.md" {
		t.Fatalf("%v %+v", err, found)
	}
	// Within RetryAfter the provider is left alone.
	requests := srv.Requests()
	found, err = ix.Find(ctx, st.Memory(), ws, "dentist appointment", 3, cfg)
	if err != nil || found.Mode != "keyword" || !strings.Contains(found.Note, "it failed") || srv.Requests() != requests {
		t.Fatalf("%v %+v; %d more requests", err, found, srv.Requests()-requests)
	}
	// Once it answers again (and it is asked again), search is hybrid.
	srv.Fail.Store(0)
	ix.RetryAfter = -1
	if found, err = ix.Find(ctx, st.Memory(), ws, "dentist appointment", 3, cfg); err != nil || found.Mode != "hybrid" || found.Note != "" {
		t.Fatalf("after recovery: %v %+v", err, found)
	}

	// Through the pipeline, the result says so in its text and details.
	srv.Fail.Store(http.StatusServiceUnavailable)
	settings := map[string]any{"embeddings": map[string]any{"provider": "openai", "baseUrl": srv.URL + "/v1", "apiKeyEnv": "-", "maxRetries": -1}}
	r := newRunner(t, memoryContext(ws, st.Memory(), settings))
	msg := run(r, "memory_search", `{"query":"dentist appointment","maxResults":2}`)
	if msg.IsError || !strings.HasPrefix(msg.Content[0].Text, "[Note: the embedding provider failed, so this is keyword search only: openai embeddings: HTTP 503") ||
		!strings.Contains(msg.Content[0].Text, "memory/dentist.md:1-") {
		t.Fatalf("%+v", msg)
	}
	details, _ := json.Marshal(msg.Details)
	var d struct {
		Results []memory.Hit
		Mode    string
		Note    string
	}
	if json.Unmarshal(details, &d) != nil || d.Mode != "keyword" || !strings.Contains(d.Note, "HTTP 503") || len(d.Results) == 0 {
		t.Fatalf("details %s", details)
	}
}

func TestMemorySettingsAreChecked(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, c := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"embedings": map[string]any{}}, `unknown field "embedings"`},
		{map[string]any{"embeddings": map[string]any{"provider": "openai", "apikey": "x"}}, `unknown field "apikey"`},
		{map[string]any{"embeddings": map[string]any{"provider": "bert"}}, `tools.memory.embeddings.provider "bert" is not known`},
	} {
		reasons := map[string]string{}
		r := registryWithMemory(t)
		r.ResolveAll(memoryContext(ws, openStore(t).Memory(), c.settings), func(id string, err error) { reasons[id] = err.Error() })
		if !strings.Contains(reasons["memory_search"], c.want) {
			t.Errorf("%v: %q, want %q", c.settings, reasons["memory_search"], c.want)
		}
	}
}

func registryWithMemory(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	if err := memory.Register(reg, nil); err != nil {
		t.Fatal(err)
	}
	return reg
}
