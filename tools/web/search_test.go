package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/tools/web"
)

// seen is a request a fake provider received.
type seen struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         map[string]any
}

// fakeProvider replays a provider's response from testdata/search and
// records what it was sent.
type fakeProvider struct {
	*server
	mu   sync.Mutex
	last seen
}

func newProvider(t *testing.T, fixture string) *fakeProvider {
	t.Helper()
	body := readTestdata(t, "search/"+fixture)
	p := &fakeProvider{}
	p.server = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()}
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			if err := json.Unmarshal(b, &s.Body); err != nil {
				t.Errorf("request body is not JSON: %s", b)
			}
		}
		p.mu.Lock()
		p.last = s
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	return p
}

func (p *fakeProvider) request() seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

func TestSearchProviders(t *testing.T) {
	t.Parallel()
	args := map[string]any{
		"query": "tide pools winter", "count": 3, "freshness": "month", "country": "us", "language": "EN",
		"includeDomains": []string{"https://www.coastalnotes.example/", "marine.example.org"}, "excludeDomains": []string{"spam.example.com"},
	}
	for _, tc := range []struct {
		provider, fixture string
		check             func(t *testing.T, r seen)
		want, absent      []string
	}{
		{provider: "brave", fixture: "brave.json",
			check: func(t *testing.T, r seen) {
				expect(t, "method", r.Method, "GET")
				expect(t, "path", r.Path, "/res/v1/web/search")
				expect(t, "token", r.Header.Get("X-Subscription-Token"), "key-brave")
				expect(t, "q", r.Query.Get("q"), "tide pools winter (site:coastalnotes.example OR site:marine.example.org) -site:spam.example.com")
				expect(t, "count", r.Query.Get("count"), "3")
				expect(t, "freshness", r.Query.Get("freshness"), "pm")
				expect(t, "country", r.Query.Get("country"), "US")
				expect(t, "search_lang", r.Query.Get("search_lang"), "en")
			},
			// Wikipedia and the parks page are outside includeDomains.
			want: []string{`Search results for "tide pools winter" (Brave Search, 1 result):`, "1. How Tide Pools Survive the Winter | Coastal Notes",
				"https://coastalnotes.example/tide-pools-winter", "Every winter the rocky shore", "intertidal zone's pools & ledges.", "Published: 2026-01-12"},
			absent: []string{"<strong>", "wikipedia", "parks.example.gov"}},
		{provider: "tavily", fixture: "tavily.json",
			check: func(t *testing.T, r seen) {
				expect(t, "method", r.Method, "POST")
				expect(t, "path", r.Path, "/search")
				expect(t, "auth", r.Header.Get("Authorization"), "Bearer key-tavily")
				expect(t, "query", r.Body["query"], "tide pools winter")
				expect(t, "max_results", r.Body["max_results"], float64(3))
				expect(t, "time_range", r.Body["time_range"], "month")
				expect(t, "include_domains", fmt.Sprint(r.Body["include_domains"]), "[coastalnotes.example marine.example.org]")
				expect(t, "exclude_domains", fmt.Sprint(r.Body["exclude_domains"]), "[spam.example.com]")
			},
			want: []string{"(Tavily, 2 results)", "2. Winter in the intertidal zone", "https://www.marine.example.org/winter-intertidal", "Published: 2026-01-12",
				"Note: Tavily does not support the country filter", "Note: Tavily does not support the language filter"}},
		{provider: "exa", fixture: "exa.json",
			check: func(t *testing.T, r seen) {
				expect(t, "path", r.Path, "/search")
				expect(t, "key", r.Header.Get("X-Api-Key"), "key-exa")
				expect(t, "numResults", r.Body["numResults"], float64(3))
				expect(t, "userLocation", r.Body["userLocation"], "US")
				expect(t, "includeDomains", fmt.Sprint(r.Body["includeDomains"]), "[coastalnotes.example marine.example.org]")
				start, err := time.Parse(time.RFC3339, fmt.Sprint(r.Body["startPublishedDate"]))
				if err != nil || time.Since(start) < 29*24*time.Hour || time.Since(start) > 31*24*time.Hour {
					t.Errorf("startPublishedDate %v: want about a month ago", r.Body["startPublishedDate"])
				}
				if _, ok := r.Body["contents"].(map[string]any)["highlights"]; !ok {
					t.Errorf("contents %v asks for no highlights", r.Body["contents"])
				}
			},
			want:   []string{"(Exa, 1 result)", "Sea anemones close into tight knobs, covering themselves with bits of shell. … Counts of anemones", "Published: 2026-01-12"},
			absent: []string{"blog.example.net"}},
		{provider: "perplexity", fixture: "perplexity.json",
			check: func(t *testing.T, r seen) {
				expect(t, "path", r.Path, "/chat/completions")
				expect(t, "auth", r.Header.Get("Authorization"), "Bearer key-perplexity")
				expect(t, "model", r.Body["model"], "sonar")
				expect(t, "recency", r.Body["search_recency_filter"], "month")
				expect(t, "domains", fmt.Sprint(r.Body["search_domain_filter"]), "[coastalnotes.example marine.example.org -spam.example.com]")
				expect(t, "country", fmt.Sprint(r.Body["web_search_options"]), "map[user_location:map[country:US]]")
			},
			want: []string{"Answer:\nTide pool animals survive winter by sheltering in crevices", "Sources:", "1. How Tide Pools Survive the Winter",
				"2. Winter in the intertidal zone", "Published: 2025-12-02"},
			absent: []string{"extra.example.com"}},
		{provider: "grok", fixture: "grok.json",
			check: func(t *testing.T, r seen) {
				expect(t, "method", r.Method, "POST")
				expect(t, "path", r.Path, "/v1/responses")
				expect(t, "auth", r.Header.Get("Authorization"), "Bearer key-grok")
				expect(t, "model", r.Body["model"], web.DefaultGrokModel)
				expect(t, "input", fmt.Sprint(r.Body["input"]), "[map[content:tide pools winter role:user]]")
				// xAI's web_search takes one of the two filters: the
				// allowed domains go, the excluded ones are applied to the hits.
				expect(t, "tools", fmt.Sprint(r.Body["tools"]), "[map[allowed_domains:[coastalnotes.example marine.example.org] type:web_search]]")
			},
			want: []string{"(Grok, 2 results)", "Answer:\nTide pool animals ride out winter in crevices", "Sources:",
				"1. How Tide Pools Survive the Winter\n   https://coastalnotes.example/tide-pools-winter", "2. (untitled)\n   https://www.marine.example.org/winter-intertidal",
				"Note: Grok does not support the country filter", "Note: Grok does not support the freshness filter", "Note: Grok does not support the language filter"},
			absent: []string{"spam.example.com/seen-only"}},
		{provider: "searxng", fixture: "searxng.json",
			check: func(t *testing.T, r seen) {
				expect(t, "path", r.Path, "/search")
				expect(t, "format", r.Query.Get("format"), "json")
				expect(t, "time_range", r.Query.Get("time_range"), "month")
				expect(t, "language", r.Query.Get("language"), "en")
				if r.Header.Get("Authorization") != "" {
					t.Error("SearXNG got an Authorization header")
				}
			},
			want:   []string{"(SearXNG, 1 result)", "How Tide Pools Survive the Winter", "Note: SearXNG does not support the country filter"},
			absent: []string{"spam.example.com", "wikipedia"}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			p := newProvider(t, tc.fixture)
			cfg := map[string]any{"baseUrl": p.URL}
			if tc.provider != "searxng" {
				cfg["apiKey"] = "key-" + tc.provider
			}
			h := newHarness(t, setup{search: map[string]any{tc.provider: cfg}})
			text, msg := h.call("web_search", args)
			if msg.IsError {
				t.Fatalf("error: %s", text)
			}
			tc.check(t, p.request())
			if !strings.Contains(text, "<<<EXTERNAL_UNTRUSTED_CONTENT id=") || !strings.Contains(text, "Source: web_search tide pools winter") {
				t.Errorf("not wrapped as external content:\n%s", text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(text, a) {
					t.Errorf("%q should not be there:\n%s", a, text)
				}
			}
			if d := details(t, msg); d["provider"] != tc.provider {
				t.Errorf("details provider %v", d["provider"])
			}
		})
	}
}

func expect(t *testing.T, what string, got, want any) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func TestSearchKeysAndSelection(t *testing.T) {
	t.Parallel()
	brave := newProvider(t, "brave.json")
	tavily := newProvider(t, "tavily.json")
	env := map[string]string{"TAVILY_API_KEY": "env-tavily"}
	getenv := func(k string) string { return env[k] }
	bases := map[string]any{"brave": map[string]any{"baseUrl": brave.URL}, "tavily": map[string]any{"baseUrl": tavily.URL}}
	// Brave comes first but has no key: Tavily, with its key from the environment, answers.
	h := newHarness(t, setup{search: bases, opts: web.Options{Getenv: getenv}})
	text, msg := h.call("web_search", map[string]any{"query": "tide pools"})
	if msg.IsError || !strings.Contains(text, "(Tavily") {
		t.Fatalf("%s", text)
	}
	expect(t, "tavily auth", tavily.request().Header.Get("Authorization"), "Bearer env-tavily")
	// provider picks one explicitly; the key from the file wins over the environment.
	h = newHarness(t, setup{search: map[string]any{"provider": "brave", "brave": map[string]any{"baseUrl": brave.URL, "apiKey": "file-brave"}}, opts: web.Options{Getenv: getenv}})
	if text, msg := h.call("web_search", map[string]any{"query": "x"}); msg.IsError || !strings.Contains(text, "(Brave Search") {
		t.Fatalf("%s", text)
	}
	expect(t, "brave token", brave.request().Header.Get("X-Subscription-Token"), "file-brave")
	expect(t, "default count", brave.request().Query.Get("count"), "5")
}

func TestSearchUnavailable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{nil, "no search provider is configured: set BRAVE_API_KEY"},
		{map[string]any{"provider": "exa"}, "web_search.provider is exa but it has no API key: set EXA_API_KEY or web_search.exa.apiKey"},
		{map[string]any{"provider": "searxng"}, "searxng.baseUrl is not set"},
		{map[string]any{"provider": "google"}, `web_search.provider is "google": use one of`},
		{map[string]any{"brave": map[string]any{"apiKey": "k", "baseUrl": "ftp://x"}}, "want an http:// or https:// URL"},
		{map[string]any{"brave": map[string]any{"key": "k"}}, `unknown field "key"`},
		{map[string]any{"timeoutSeconds": -1}, "must not be negative"},
	} {
		h := newHarness(t, setup{search: tc.cfg})
		reasons := map[string]string{}
		h.reg.ResolveAll(h.tc, func(id string, err error) { reasons[id] = err.Error() })
		if !strings.Contains(reasons["web_search"], tc.want) {
			t.Errorf("%v: reason %q, want %q", tc.cfg, reasons["web_search"], tc.want)
		}
		if _, ok := reasons["web_fetch"]; ok {
			t.Errorf("%v: web_fetch unavailable: %s", tc.cfg, reasons["web_fetch"])
		}
		text, msg := h.call("web_search", map[string]any{"query": "x"})
		if !msg.IsError {
			t.Errorf("%v: an unavailable tool ran: %s", tc.cfg, text)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	var mode atomic.Value
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client leaving
		switch mode.Load().(string) {
		case "401":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid.","status":401}}`)
		case "429":
			w.Header().Set("Retry-After", "17")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"type":"ErrorResponse","error":{"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan.","status":429}}`)
		case "432":
			w.WriteHeader(432)
			fmt.Fprint(w, `{"detail":{"error":"This request exceeds your plan's set usage limit."}}`)
		case "422":
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"message":"query too long"}`)
		case "500":
			w.WriteHeader(http.StatusInternalServerError)
		case "html":
			fmt.Fprint(w, "<html>maintenance</html>")
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}
	}))
	cfg := func(p string) map[string]any {
		return map[string]any{"timeoutSeconds": 1, "cacheTtl": "0s", p: map[string]any{"apiKey": "bad", "baseUrl": srv.URL}}
	}
	for _, tc := range []struct {
		provider, mode string
		want           []string
	}{
		{"brave", "401", []string{"Brave Search refused the API key (HTTP 401: The provided subscription token is invalid.)", "BRAVE_API_KEY or tools.web_search.brave.apiKey"}},
		{"exa", "401", []string{"Exa refused the API key", "EXA_API_KEY"}},
		{"brave", "429", []string{"rate limit or the plan's quota is used up (HTTP 429: Request rate limit exceeded for plan.)", "Retry after 17 seconds"}},
		{"tavily", "432", []string{"Tavily says the rate limit or the plan's quota is used up (HTTP 432: This request exceeds your plan's set usage limit.)", "tell the user"}},
		{"perplexity", "422", []string{"Perplexity rejected the search (HTTP 422: query too long)", "Simplify the query"}},
		{"tavily", "500", []string{"Tavily failed (HTTP 500). Try again"}},
		{"brave", "html", []string{"Brave Search answered with something that is not its JSON result format"}},
		{"exa", "slow", []string{"Exa did not answer within 1s"}},
	} {
		mode.Store(tc.mode)
		h := newHarness(t, setup{search: cfg(tc.provider)})
		text, msg := h.call("web_search", map[string]any{"query": "x"})
		if !msg.IsError {
			t.Errorf("%s %s: not an error: %s", tc.provider, tc.mode, text)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s: missing %q in %s", tc.provider, tc.mode, w, text)
			}
		}
	}
	mode.Store("401")
	h := newHarness(t, setup{search: map[string]any{"searxng": map[string]any{"baseUrl": srv.URL}}})
	if text, _ := h.call("web_search", map[string]any{"query": "x"}); !strings.Contains(text, "add json to search.formats") {
		t.Errorf("SearXNG without the JSON format: %s", text)
	}
}

// TestSearchRedirects follows a provider's redirect within its own host
// and refuses one to another host, which is never contacted.
func TestSearchRedirects(t *testing.T) {
	t.Parallel()
	elsewhere := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"results":[]}`) }))
	p := newProvider(t, "searxng.json")
	// The other host: the same server by another name.
	away := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)
	front := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/away"); ok {
			http.Redirect(w, r, away+rest+"?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		http.Redirect(w, r, p.URL+r.URL.Path+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
	}))
	// front and p are both 127.0.0.1: the same host, another port.
	h := newHarness(t, setup{search: map[string]any{"cacheTtl": "0s", "searxng": map[string]any{"baseUrl": front.URL}}})
	if text, msg := h.call("web_search", map[string]any{"query": "tide pools"}); msg.IsError || !strings.Contains(text, "How Tide Pools Survive the Winter") {
		t.Errorf("a redirect within the host: %s", text)
	}
	h = newHarness(t, setup{search: map[string]any{"cacheTtl": "0s", "searxng": map[string]any{"baseUrl": front.URL + "/away"}}})
	text, msg := h.call("web_search", map[string]any{"query": "tide pools"})
	if !msg.IsError || !strings.Contains(text, "SearXNG redirected to another host, localhost:") || !strings.Contains(text, "tools.web_search.searxng.baseUrl") {
		t.Errorf("a redirect to another host: %s", text)
	}
	if n := elsewhere.hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
}

func TestSearchCache(t *testing.T) {
	t.Parallel()
	p := newProvider(t, "searxng.json")
	h := newHarness(t, setup{search: map[string]any{"searxng": map[string]any{"baseUrl": p.URL}}, cache: true})
	h.call("web_search", map[string]any{"query": "tide pools"})
	_, msg := h.call("web_search", map[string]any{"query": "tide pools"})
	h.call("web_search", map[string]any{"query": "tide pools", "count": 2})
	if n := p.hits.Load(); n != 2 {
		t.Errorf("%d requests for two distinct searches, want 2", n)
	}
	if details(t, msg)["cached"] != true {
		t.Error("the repeated search is not marked cached")
	}
}

func TestSearchSchema(t *testing.T) {
	t.Parallel()
	p := newProvider(t, "searxng.json")
	h := newHarness(t, setup{search: map[string]any{"searxng": map[string]any{"baseUrl": p.URL}}})
	tl, ok := h.reg.Resolve("web_search", h.tc, nil)
	if !ok {
		t.Fatal("web_search not resolved")
	}
	b, _ := json.Marshal(tl.Parameters)
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal(b, &s)
	var names []string
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "count,country,excludeDomains,freshness,includeDomains,language,query" {
		t.Errorf("properties %s", got)
	}
	if fmt.Sprint(s.Required) != "[query]" {
		t.Errorf("required %v", s.Required)
	}
	for _, bad := range []map[string]any{{"query": "x", "count": 11}, {"query": "x", "freshness": "hour"}, {"query": "x", "country": "USA"}, {"query": ""}} {
		if text, msg := h.call("web_search", bad); !msg.IsError {
			t.Errorf("%v accepted: %s", bad, text)
		}
	}
	if n := p.hits.Load(); n != 0 {
		t.Errorf("invalid arguments reached the provider %d times", n)
	}
}

// TestGrokSearchFilters: xAI's web_search takes allowed or excluded
// domains, five at most, never both; the key comes from XAI_API_KEY.
func TestGrokSearchFilters(t *testing.T) {
	t.Parallel()
	p := newProvider(t, "grok.json")
	getenv := func(k string) string { return map[string]string{"XAI_API_KEY": "env-xai"}[k] }
	h := newHarness(t, setup{search: map[string]any{"grok": map[string]any{"baseUrl": p.URL, "model": "grok-4"}}, opts: web.Options{Getenv: getenv}})
	for _, tc := range []struct {
		args  map[string]any
		tools string
		hits  float64 // the filters applied to the hits all the same
	}{
		{map[string]any{"query": "q", "excludeDomains": []string{"spam.example.com"}}, "[map[excluded_domains:[spam.example.com] type:web_search]]", 2},
		{map[string]any{"query": "q", "includeDomains": []string{"a.example", "b.example", "c.example", "d.example", "e.example", "coastalnotes.example"}}, "[map[type:web_search]]", 1},
	} {
		text, msg := h.call("web_search", tc.args)
		if msg.IsError {
			t.Fatalf("%v: %s", tc.args, text)
		}
		r := p.request()
		expect(t, "auth", r.Header.Get("Authorization"), "Bearer env-xai")
		expect(t, "model", r.Body["model"], "grok-4")
		expect(t, "tools", fmt.Sprint(r.Body["tools"]), tc.tools)
		if d := details(t, msg); d["count"] != tc.hits {
			t.Errorf("%v: %v hits, want %v:\n%s", tc.args, d["count"], tc.hits, text)
		}
	}
}
