package memory

// This file holds thin HTTP clients of embedding providers, for hybrid
// search: OpenAI's /v1/embeddings (which OpenAI-compatible servers serve
// too), Gemini's batchEmbedContents and Ollama's /api/embed. They batch,
// retry on 429 and 5xx answers and on network errors (honouring
// Retry-After), and bound each request with a timeout. They are thin
// rather than the providers' SDKs: one endpoint each, and the same retry
// and batching for all.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/internal/retry"
	"github.com/toolbelt/toolbelt/internal/textclip"
)

// EmbedKind says what a text is embedded for; providers that tell the two
// apart (Gemini's task types) embed them differently.
type EmbedKind int

const (
	// Document is a text to be found.
	Document EmbedKind = iota
	// Query is a search.
	Query
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string, kind EmbedKind) ([][]float32, error)
	// Model names the provider, model and dimensions: vectors of different
	// models are never compared.
	Model() string
}

// Embeddings configures an embedding provider (tools.memory.embeddings).
type Embeddings struct {
	// Provider names the API: openai (also any OpenAI-compatible server,
	// with baseUrl), gemini or ollama.
	Provider string `json:"provider"`
	// Model is the embedding model (default text-embedding-3-small for
	// openai, gemini-embedding-001 for gemini, nomic-embed-text for
	// ollama).
	Model string `json:"model,omitempty"`
	// BaseURL is the API's address (default https://api.openai.com/v1,
	// https://generativelanguage.googleapis.com/v1beta,
	// http://127.0.0.1:11434).
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKeyEnv is the environment variable holding the API key, read at
	// each request (default OPENAI_API_KEY for openai, GEMINI_API_KEY for
	// gemini; none for ollama). An OpenAI-compatible server without keys
	// needs none: set it to "-".
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Dimensions asks for vectors of that many dimensions, for models that
	// can shorten theirs (0: the model's own).
	Dimensions int `json:"dimensions,omitempty"`
	// BatchSize is how many texts go in one request (default 64; Gemini
	// takes at most 100).
	BatchSize int `json:"batchSize,omitempty" default:"64"`
	// Timeout bounds one request, as a Go duration (default "30s").
	Timeout string `json:"timeout,omitempty" default:"30s"`
	// MaxRetries is how often a request refused with 429 or 5xx, or cut by
	// a network error, is tried again (default 3; -1: never).
	MaxRetries int `json:"maxRetries,omitempty" default:"3"`
	// MinSimilarity is the least cosine similarity between a query and a
	// chunk for the chunk to be a vector candidate (default 0.25; -1: any).
	// Models differ in how similar unrelated texts look: raise it when
	// unrelated notes come up, lower it when related ones do not.
	MinSimilarity float64 `json:"minSimilarity,omitempty" default:"0.25"`
}

// MaxInputChars bounds the characters of one text sent to a provider: a
// longer one is cut (models take a few thousand tokens at most).
const MaxInputChars = 6000

// NewEmbedder returns the client of c's provider, with c's defaults
// applied.
func NewEmbedder(c Embeddings) (Embedder, error) {
	cl := &client{cfg: c, http: &http.Client{}, retryBase: 500 * time.Millisecond}
	switch c.Provider {
	case "openai":
		cl.cfg.Model = or(c.Model, "text-embedding-3-small")
		cl.cfg.BaseURL = or(c.BaseURL, "https://api.openai.com/v1")
		cl.cfg.APIKeyEnv = or(c.APIKeyEnv, "OPENAI_API_KEY")
		cl.do = cl.openai
	case "gemini":
		cl.cfg.Model = strings.TrimPrefix(or(c.Model, "gemini-embedding-001"), "models/")
		cl.cfg.BaseURL = or(c.BaseURL, "https://generativelanguage.googleapis.com/v1beta")
		cl.cfg.APIKeyEnv = or(c.APIKeyEnv, "GEMINI_API_KEY")
		cl.do = cl.gemini
	case "ollama":
		cl.cfg.Model = or(c.Model, "nomic-embed-text")
		cl.cfg.BaseURL = or(c.BaseURL, "http://127.0.0.1:11434")
		cl.do = cl.ollama
	case "":
		return nil, errors.New("embeddings.provider is missing: set openai (or an OpenAI-compatible server with baseUrl), gemini or ollama")
	default:
		return nil, fmt.Errorf("embeddings.provider %q is not known: use openai (also for OpenAI-compatible servers, with baseUrl), gemini or ollama", c.Provider)
	}
	cl.cfg.BaseURL = strings.TrimSuffix(cl.cfg.BaseURL, "/")
	if !strings.HasPrefix(cl.cfg.BaseURL, "http://") && !strings.HasPrefix(cl.cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("embeddings.baseUrl %q is not an http:// or https:// URL", cl.cfg.BaseURL)
	}
	if c.Dimensions < 0 || c.BatchSize < 0 || c.MaxRetries < -1 {
		return nil, errors.New("embeddings.dimensions and embeddings.batchSize must not be negative, embeddings.maxRetries at least -1")
	}
	cl.cfg.BatchSize = c.BatchSize
	if cl.cfg.BatchSize == 0 {
		cl.cfg.BatchSize = 64
	}
	if c.Provider == "gemini" && cl.cfg.BatchSize > 100 {
		return nil, fmt.Errorf("embeddings.batchSize %d is over Gemini's 100", cl.cfg.BatchSize)
	}
	cl.timeout = 30 * time.Second
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("embeddings.timeout %q is not a duration such as 30s", c.Timeout)
		}
		cl.timeout = d
	}
	switch c.MaxRetries {
	case 0:
		cl.retries = 3
	case -1:
		cl.retries = 0
	default:
		cl.retries = c.MaxRetries
	}
	return cl, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type client struct {
	cfg       Embeddings
	http      *http.Client
	timeout   time.Duration
	retries   int
	retryBase time.Duration
	// do embeds one batch.
	do func(ctx context.Context, texts []string, kind EmbedKind) ([][]float32, error)
}

func (c *client) Model() string {
	return fmt.Sprintf("%s:%s:%d", c.cfg.Provider, c.cfg.Model, c.cfg.Dimensions)
}

func (c *client) Embed(ctx context.Context, texts []string, kind EmbedKind) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.BatchSize {
		batch := texts[start:min(start+c.cfg.BatchSize, len(texts))]
		for i, t := range batch {
			if utf8.RuneCountInString(t) > MaxInputChars {
				if i == 0 {
					batch = append([]string(nil), batch...)
				}
				batch[i] = string([]rune(t)[:MaxInputChars])
			}
		}
		vs, err := c.do(ctx, batch, kind)
		if err != nil {
			return nil, err
		}
		if len(vs) != len(batch) {
			return nil, fmt.Errorf("%s returned %d vectors for %d texts", c.cfg.Provider, len(vs), len(batch))
		}
		for i, v := range vs {
			if len(v) == 0 {
				return nil, fmt.Errorf("%s returned an empty vector for text %d", c.cfg.Provider, start+i)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

// key returns the API key, read now (keys rotate).
func (c *client) key() (string, error) {
	if c.cfg.APIKeyEnv == "" || c.cfg.APIKeyEnv == "-" {
		return "", nil
	}
	k := os.Getenv(c.cfg.APIKeyEnv)
	if k == "" {
		return "", fmt.Errorf("the %s embedding API key is read from $%s, which is not set", c.cfg.Provider, c.cfg.APIKeyEnv)
	}
	return k, nil
}

func (c *client) openai(ctx context.Context, texts []string, _ EmbedKind) ([][]float32, error) {
	req := map[string]any{"model": c.cfg.Model, "input": texts, "encoding_format": "float"}
	if c.cfg.Dimensions > 0 {
		req["dimensions"] = c.cfg.Dimensions
	}
	key, err := c.key()
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := c.post(ctx, c.cfg.BaseURL+"/embeddings", h, req, &resp); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(out) {
			return nil, fmt.Errorf("openai returned a vector for text %d of %d", d.Index, len(texts))
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

func (c *client) gemini(ctx context.Context, texts []string, kind EmbedKind) ([][]float32, error) {
	task := "RETRIEVAL_DOCUMENT"
	if kind == Query {
		task = "RETRIEVAL_QUERY"
	}
	type part struct {
		Text string `json:"text"`
	}
	type request struct {
		Model   string `json:"model"`
		Content struct {
			Parts []part `json:"parts"`
		} `json:"content"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality,omitempty"`
	}
	reqs := make([]request, len(texts))
	for i, t := range texts {
		reqs[i].Model = "models/" + c.cfg.Model
		reqs[i].Content.Parts = []part{{Text: t}}
		reqs[i].TaskType = task
		reqs[i].OutputDimensionality = c.cfg.Dimensions
	}
	key, err := c.key()
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if key != "" {
		h.Set("x-goog-api-key", key)
	}
	var resp struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := c.post(ctx, c.cfg.BaseURL+"/models/"+c.cfg.Model+":batchEmbedContents", h, map[string]any{"requests": reqs}, &resp); err != nil {
		return nil, err
	}
	out := make([][]float32, len(resp.Embeddings))
	for i, e := range resp.Embeddings {
		out[i] = e.Values
	}
	return out, nil
}

func (c *client) ollama(ctx context.Context, texts []string, _ EmbedKind) ([][]float32, error) {
	req := map[string]any{"model": c.cfg.Model, "input": texts}
	if c.cfg.Dimensions > 0 {
		req["dimensions"] = c.cfg.Dimensions
	}
	var resp struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := c.post(ctx, c.cfg.BaseURL+"/api/embed", http.Header{}, req, &resp); err != nil {
		return nil, err
	}
	return resp.Embeddings, nil
}

// maxResponseBytes bounds a provider's answer.
const maxResponseBytes = 256 << 20

// maxRetryAfter bounds how long a Retry-After, or the backoff, waits.
const maxRetryAfter = 30 * time.Second

// StatusError is a provider's answer with a status other than 200.
type StatusError struct {
	Provider string
	Status   int
	Body     string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s embeddings: HTTP %d: %s", e.Provider, e.Status, e.Body)
}

// post sends body as JSON to url and decodes the answer into out, trying
// again on 429, 5xx and network errors.
func (c *client) post(ctx context.Context, url string, h http.Header, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		again, wait, err := c.try(ctx, url, h, payload, out)
		if err == nil {
			return nil
		}
		if !again || attempt >= c.retries || ctx.Err() != nil {
			return err
		}
		if wait < 0 {
			wait = retry.Backoff(c.retryBase, maxRetryAfter, attempt+1)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// try makes one request. again says whether trying again may help, wait
// how long the server asked to wait first (negative: the backoff decides).
func (c *client) try(ctx context.Context, url string, h http.Header, payload []byte, out any) (again bool, wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return false, 0, err
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return true, -1, fmt.Errorf("%s embeddings: %w", c.cfg.Provider, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return true, -1, fmt.Errorf("%s embeddings: reading the answer: %w", c.cfg.Provider, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := textclip.Clip(strings.TrimSpace(string(data)), 300)
		serr := &StatusError{Provider: c.cfg.Provider, Status: resp.StatusCode, Body: msg}
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
			return false, 0, serr
		}
		if after, ok := retry.After(resp.Header, time.Now()); ok {
			return true, min(after, maxRetryAfter), serr
		}
		return true, -1, serr
	}
	if err := json.Unmarshal(data, out); err != nil {
		return false, 0, fmt.Errorf("%s embeddings: the answer is not the expected JSON: %w", c.cfg.Provider, err)
	}
	return false, 0, nil
}
