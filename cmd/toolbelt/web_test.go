package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWebTools runs the web tools through the CLI: web_search is listed as
// unavailable, with the reason, until a provider is configured; web_fetch
// reaches a server on 127.0.0.1 only once toolbelt.yaml allows it, and its
// cache lives in the store, across processes.
func TestWebTools(t *testing.T) {
	for _, k := range []string{"BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY", "PERPLEXITY_API_KEY", "XAI_API_KEY"} {
		t.Setenv(k, "") // the child sees no keys, whatever this machine has
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Internal docs</title></head><body><main><p>Deploys happen on Tuesdays.</p></main></body></html>")
	}))
	defer srv.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	r := runCLI(t, "", "list", "--json", "--section", "web").expect(t, 0)
	var listed []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	search, fetch := listed[0], listed[1]
	if search["id"] != "web_search" || search["available"] != false || !strings.Contains(search["unavailableReason"].(string), "no search provider is configured") {
		t.Errorf("web_search: %v", search)
	}
	if fetch["id"] != "web_fetch" || fetch["available"] != true {
		t.Errorf("web_fetch: %v", fetch)
	}

	// Without an allowlist, the test server's loopback address is refused.
	r = runCLI(t, "", "--data", data, "call", "web_fetch", "--args", `{"url":"`+srv.URL+`/"}`).expect(t, 1)
	if !strings.Contains(r.stderr, "loopback") || hits.Load() != 0 {
		t.Errorf("not refused (%d hits): %s", hits.Load(), r.stderr)
	}

	cfg := filepath.Join(dir, "toolbelt.yaml")
	yaml := fmt.Sprintf("tools:\n  web_fetch:\n    allowHosts: [%q]\n  web_search:\n    searxng:\n      baseUrl: %s\n", strings.TrimPrefix(srv.URL, "http://"), srv.URL)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r = runCLI(t, "", "--config", cfg, "--data", data, "call", "web_fetch", "--args", `{"url":"`+srv.URL+`/"}`).expect(t, 0)
		for _, want := range []string{"<<<EXTERNAL_UNTRUSTED_CONTENT", "Title: Internal docs", "Deploys happen on Tuesdays."} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("missing %q:\n%s", want, r.stdout)
			}
		}
	}
	if hits.Load() != 1 {
		t.Errorf("the server got %d requests for two calls; the second should come from the cache", hits.Load())
	}
	r = runCLI(t, "", "--config", cfg, "list", "--json", "--section", "web").expect(t, 0)
	if !strings.Contains(r.stdout, `"id": "web_search"`) || strings.Contains(r.stdout, "no search provider") {
		t.Errorf("web_search with SearXNG configured:\n%s", r.stdout)
	}
	runCLI(t, "", "config", "check", cfg).expect(t, 0)
	// A misspelled setting is reported at its line.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("tools:\n  web_fetch:\n    allowHost: [docs.internal]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "config", "check", bad).expect(t, 2)
	if !strings.Contains(r.stderr, `bad.yaml:3:5: tools.web_fetch.allowHost: unknown key; did you mean "allowHosts"?`) {
		t.Errorf("config check: %s", r.stderr)
	}
}
