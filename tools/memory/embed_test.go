package memory_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/memory/embedtest"
)

// providers are the embedding settings of each wire format against srv.
func providers(srv *embedtest.Server) map[string]memory.Embeddings {
	return map[string]memory.Embeddings{
		"openai": {Provider: "openai", BaseURL: srv.URL + "/v1", APIKeyEnv: "-"},
		"gemini": {Provider: "gemini", BaseURL: srv.URL + "/v1beta", APIKeyEnv: "TOOLBELT_TEST_GEMINI_KEY"},
		"ollama": {Provider: "ollama", BaseURL: srv.URL},
	}
}

func TestEmbeddingClientsSpeakEachWireFormat(t *testing.T) {
	t.Setenv("TOOLBELT_TEST_GEMINI_KEY", "k")
	for _, name := range []string{"openai", "gemini", "ollama"} {
		t.Run(name, func(t *testing.T) {
			srv := embedtest.Start()
			defer srv.Close()
			cfg := providers(srv)[name]
			cfg.BatchSize = 2
			emb, err := memory.NewEmbedder(cfg)
			if err != nil {
				t.Fatal(err)
			}
			texts := []string{"one car", "two doctors", "three", "four", "five " + strings.Repeat("long ", 3000)}
			vs, err := emb.Embed(context.Background(), texts, memory.Document)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(texts) {
				t.Fatalf("%d vectors", len(vs))
			}
			for i, v := range vs[:4] {
				if !slices.Equal(v, embedtest.Vector(texts[i])) {
					t.Errorf("vector %d is not the model's", i)
				}
			}
			if srv.Requests() != 3 {
				t.Errorf("%d requests for 5 texts in batches of 2, want 3", srv.Requests())
			}
			if got := srv.Texts()[4]; len([]rune(got)) != memory.MaxInputChars {
				t.Errorf("a long text went out with %d characters, want it cut at %d", len([]rune(got)), memory.MaxInputChars)
			}
			if !strings.HasPrefix(emb.Model(), name+":") {
				t.Errorf("model %q", emb.Model())
			}
		})
	}
}

func TestEmbeddingClientsRetryAndGiveUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := embedtest.Start()
	defer srv.Close()
	emb, err := memory.NewEmbedder(memory.Embeddings{Provider: "ollama", BaseURL: srv.URL, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Two 503s with Retry-After: 0, then an answer.
	srv.FailNext.Store(2)
	if _, err := emb.Embed(ctx, []string{"x"}, memory.Query); err != nil || srv.Requests() != 3 {
		t.Fatalf("%v after %d requests, want success after 3", err, srv.Requests())
	}
	// A refusal that retrying cannot help is not retried.
	srv.Fail.Store(http.StatusBadRequest)
	_, err = emb.Embed(ctx, []string{"x"}, memory.Query)
	var se *memory.StatusError
	if !errors.As(err, &se) || se.Status != 400 || srv.Requests() != 4 {
		t.Fatalf("%v after %d requests, want one more", err, srv.Requests())
	}
	// Three 503s exhaust two retries.
	srv.Fail.Store(0)
	srv.FailNext.Store(3)
	if _, err := emb.Embed(ctx, []string{"x"}, memory.Query); !errors.As(err, &se) || se.Status != 503 || srv.Requests() != 7 {
		t.Fatalf("%v after %d requests, want 503 after 3 more", err, srv.Requests())
	}
}

func TestEmbeddingClientsTimeOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	emb, err := memory.NewEmbedder(memory.Embeddings{Provider: "openai", BaseURL: srv.URL, APIKeyEnv: "-", Timeout: "100ms", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emb.Embed(context.Background(), []string{"x"}, memory.Query); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("want a timeout, got %v", err)
	}
}

func TestEmbeddingSettingsAreChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  memory.Embeddings
		want string
	}{
		{memory.Embeddings{}, "provider is missing"},
		{memory.Embeddings{Provider: "cohere"}, `"cohere" is not known`},
		{memory.Embeddings{Provider: "openai", BaseURL: "ftp://x"}, "not an http:// or https:// URL"},
		{memory.Embeddings{Provider: "openai", Timeout: "soon"}, `timeout "soon" is not a duration`},
		{memory.Embeddings{Provider: "gemini", BatchSize: 101}, "over Gemini's 100"},
		{memory.Embeddings{Provider: "ollama", Dimensions: -1}, "must not be negative"},
	} {
		if _, err := memory.NewEmbedder(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	emb, err := memory.NewEmbedder(memory.Embeddings{Provider: "openai", BaseURL: "http://127.0.0.1:1", APIKeyEnv: "TOOLBELT_TEST_UNSET_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emb.Embed(context.Background(), []string{"x"}, memory.Query); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("$%s, which is not set", "TOOLBELT_TEST_UNSET_KEY")) {
		t.Fatalf("%v", err)
	}
}
