package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Each provider maps the one schema the model sees onto its own API.

// siteQuery adds site: operators for the domain filters to a query, for
// providers whose only domain filter is the query language.
func siteQuery(q searchArgs) string {
	s := q.Query
	switch len(q.IncludeDomains) {
	case 0:
	case 1:
		s += " site:" + q.IncludeDomains[0]
	default:
		s += " (site:" + strings.Join(q.IncludeDomains, " OR site:") + ")"
	}
	for _, d := range q.ExcludeDomains {
		s += " -site:" + d
	}
	return s
}

// brave is the Brave Search API: GET /res/v1/web/search.
type brave struct{ key, base string }

var braveFreshness = map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}

func (p *brave) search(ctx context.Context, c *client, q searchArgs) (answer, error) {
	v := url.Values{"q": {siteQuery(q)}, "count": {strconv.Itoa(q.Count)}}
	if f := braveFreshness[q.Freshness]; f != "" {
		v.Set("freshness", f)
	}
	if q.Country != "" {
		v.Set("country", q.Country)
	}
	if q.Language != "" {
		v.Set("search_lang", q.Language)
	}
	var out struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Age         string `json:"age"`
				PageAge     string `json:"page_age"`
			} `json:"results"`
		} `json:"web"`
	}
	h := http.Header{"X-Subscription-Token": {p.key}}
	if err := c.do(ctx, http.MethodGet, p.base+"/res/v1/web/search?"+v.Encode(), h, nil, &out); err != nil {
		return answer{}, err
	}
	var a answer
	for _, r := range out.Web.Results {
		a.Hits = append(a.Hits, hit{Title: r.Title, URL: r.URL, Snippet: r.Description, Date: cmpOr(day(r.PageAge), r.Age)})
	}
	return a, nil
}

// tavily is Tavily's POST /search.
type tavily struct{ key, base string }

func (p *tavily) search(ctx context.Context, c *client, q searchArgs) (answer, error) {
	body := map[string]any{"query": q.Query, "max_results": q.Count, "search_depth": "basic"}
	if q.Freshness != "" {
		body["time_range"] = q.Freshness
	}
	if len(q.IncludeDomains) > 0 {
		body["include_domains"] = q.IncludeDomains
	}
	if len(q.ExcludeDomains) > 0 {
		body["exclude_domains"] = q.ExcludeDomains
	}
	var a answer
	if q.Country != "" {
		a.Ignored = append(a.Ignored, "country") // Tavily wants country names, only for some topics
	}
	if q.Language != "" {
		a.Ignored = append(a.Ignored, "language")
	}
	var out struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
	if err := c.do(ctx, http.MethodPost, p.base+"/search", http.Header{"Authorization": {"Bearer " + p.key}}, body, &out); err != nil {
		return answer{}, err
	}
	for _, r := range out.Results {
		a.Hits = append(a.Hits, hit{Title: r.Title, URL: r.URL, Snippet: r.Content, Date: day(r.PublishedDate)})
	}
	return a, nil
}

// exa is Exa's POST /search, with highlights as snippets.
type exa struct{ key, base string }

var freshnessSpan = map[string]time.Duration{"day": 24 * time.Hour, "week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour}

func (p *exa) search(ctx context.Context, c *client, q searchArgs) (answer, error) {
	body := map[string]any{
		"query": q.Query, "numResults": q.Count, "type": "auto",
		"contents": map[string]any{"highlights": map[string]any{"maxCharacters": maxSnippetChars}},
	}
	if span, ok := freshnessSpan[q.Freshness]; ok {
		body["startPublishedDate"] = time.Now().Add(-span).UTC().Format(time.RFC3339)
	}
	if len(q.IncludeDomains) > 0 {
		body["includeDomains"] = q.IncludeDomains
	}
	if len(q.ExcludeDomains) > 0 {
		body["excludeDomains"] = q.ExcludeDomains
	}
	if q.Country != "" {
		body["userLocation"] = q.Country
	}
	var a answer
	if q.Language != "" {
		a.Ignored = append(a.Ignored, "language")
	}
	var out struct {
		Results []struct {
			Title         string   `json:"title"`
			URL           string   `json:"url"`
			PublishedDate string   `json:"publishedDate"`
			Highlights    []string `json:"highlights"`
			Summary       string   `json:"summary"`
			Text          string   `json:"text"`
		} `json:"results"`
	}
	if err := c.do(ctx, http.MethodPost, p.base+"/search", http.Header{"X-Api-Key": {p.key}}, body, &out); err != nil {
		return answer{}, err
	}
	for _, r := range out.Results {
		snippet := strings.Join(r.Highlights, " … ")
		snippet = cmpOr(cmpOr(snippet, r.Summary), r.Text)
		a.Hits = append(a.Hits, hit{Title: r.Title, URL: r.URL, Snippet: snippet, Date: day(r.PublishedDate)})
	}
	return a, nil
}

// perplexity is Perplexity's Sonar: POST /chat/completions, which answers
// in prose and lists its sources.
type perplexity struct{ key, base, model string }

func (p *perplexity) search(ctx context.Context, c *client, q searchArgs) (answer, error) {
	body := map[string]any{
		"model":    p.model,
		"messages": []map[string]string{{"role": "user", "content": q.Query}},
	}
	if q.Freshness != "" {
		body["search_recency_filter"] = q.Freshness
	}
	var domains []string
	domains = append(domains, q.IncludeDomains...)
	for _, d := range q.ExcludeDomains {
		domains = append(domains, "-"+d)
	}
	if len(domains) > 0 {
		body["search_domain_filter"] = domains
	}
	if q.Country != "" {
		body["web_search_options"] = map[string]any{"user_location": map[string]any{"country": q.Country}}
	}
	var a answer
	if q.Language != "" {
		a.Ignored = append(a.Ignored, "language")
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Citations     []string `json:"citations"`
		SearchResults []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Date    string `json:"date"`
			Snippet string `json:"snippet"`
		} `json:"search_results"`
	}
	if err := c.do(ctx, http.MethodPost, p.base+"/chat/completions", http.Header{"Authorization": {"Bearer " + p.key}}, body, &out); err != nil {
		return answer{}, err
	}
	if len(out.Choices) > 0 {
		a.Summary = out.Choices[0].Message.Content
	}
	seen := map[string]bool{}
	for _, r := range out.SearchResults {
		seen[r.URL] = true
		a.Hits = append(a.Hits, hit{Title: r.Title, URL: r.URL, Snippet: r.Snippet, Date: day(r.Date)})
	}
	for _, u := range out.Citations {
		if !seen[u] {
			seen[u] = true
			a.Hits = append(a.Hits, hit{URL: u})
		}
	}
	return a, nil
}

// grok is xAI's Responses API, POST /v1/responses with its server-side
// web_search tool: Grok searches, answers in prose and cites its sources,
// inline (url_citation annotations) and as a list (citations).
type grok struct{ key, base, model string }

// maxGrokDomains is how many domains xAI's web_search takes in either
// filter. With more, or with both filters, the filter is left to the
// results (filterHits applies both to every provider's hits).
const maxGrokDomains = 5

func (p *grok) search(ctx context.Context, c *client, q searchArgs) (answer, error) {
	search := map[string]any{"type": "web_search"}
	switch {
	case len(q.IncludeDomains) > 0 && len(q.IncludeDomains) <= maxGrokDomains:
		search["allowed_domains"] = q.IncludeDomains
	case len(q.IncludeDomains) == 0 && len(q.ExcludeDomains) > 0 && len(q.ExcludeDomains) <= maxGrokDomains:
		search["excluded_domains"] = q.ExcludeDomains
	}
	body := map[string]any{
		"model": p.model,
		"input": []map[string]string{{"role": "user", "content": q.Query}},
		"tools": []any{search},
	}
	var a answer
	for name, v := range map[string]string{"freshness": q.Freshness, "country": q.Country, "language": q.Language} {
		if v != "" {
			a.Ignored = append(a.Ignored, name)
		}
	}
	slices.Sort(a.Ignored)
	var out struct {
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Annotations []struct {
					Type  string `json:"type"`
					URL   string `json:"url"`
					Title string `json:"title"`
				} `json:"annotations"`
			} `json:"content"`
		} `json:"output"`
		Citations []string `json:"citations"`
	}
	if err := c.do(ctx, http.MethodPost, p.base+"/v1/responses", http.Header{"Authorization": {"Bearer " + p.key}}, body, &out); err != nil {
		return answer{}, err
	}
	seen := map[string]bool{}
	var text []string
	for _, item := range out.Output {
		if item.Type != "message" {
			continue
		}
		for _, part := range item.Content {
			if part.Type != "output_text" {
				continue
			}
			text = append(text, part.Text)
			for _, an := range part.Annotations {
				if an.Type == "url_citation" && !seen[an.URL] {
					seen[an.URL] = true
					a.Hits = append(a.Hits, hit{Title: citationTitle(an.Title), URL: an.URL})
				}
			}
		}
	}
	a.Summary = strings.Join(text, "\n")
	for _, u := range out.Citations {
		if !seen[u] {
			seen[u] = true
			a.Hits = append(a.Hits, hit{URL: u})
		}
	}
	return a, nil
}

// citationTitle is an annotation's title, unless it is only the citation's
// number ("1"), as Grok's often are.
func citationTitle(s string) string {
	if _, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return ""
	}
	return s
}

// searxng is a SearXNG instance's GET /search?format=json.
type searxng struct{ base string }

func (p *searxng) search(ctx context.Context, c *client, q searchArgs) (answer, error) {
	v := url.Values{"q": {siteQuery(q)}, "format": {"json"}, "pageno": {"1"}, "safesearch": {"1"}}
	if q.Freshness != "" {
		v.Set("time_range", q.Freshness)
	}
	if q.Language != "" {
		v.Set("language", q.Language)
	}
	var a answer
	if q.Country != "" {
		a.Ignored = append(a.Ignored, "country")
	}
	var out struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"publishedDate"`
		} `json:"results"`
	}
	if err := c.do(ctx, http.MethodGet, p.base+"/search?"+v.Encode(), nil, nil, &out); err != nil {
		return answer{}, err
	}
	for _, r := range out.Results {
		a.Hits = append(a.Hits, hit{Title: r.Title, URL: r.URL, Snippet: r.Content, Date: day(r.PublishedDate)})
	}
	return a, nil
}

// day shortens a timestamp to its date when it is one ("2026-03-01T…" →
// "2026-03-01"); other text ("3 days ago") is kept.
func day(s string) string {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return s
}
