// Package embedtest serves a deterministic embedding model over HTTP on
// 127.0.0.1, speaking the three wire formats of the memory tools' embedding clients (OpenAI
// /v1/embeddings, Gemini batchEmbedContents, Ollama /api/embed), for tests
// and benchmarks.
//
// The model is a hashed bag of words: each word of a text (lower case,
// letters and digits, a plural's s dropped) adds to one of Dims coordinates
// chosen by its hash, and the vector is normalized. A few groups of
// synonyms (car, automobile, vehicle; doctor, physician; …) hash as one
// word, so texts that say the same thing in other words are near, as with
// a real model, while sharing no word a keyword index would match.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// Dims is the number of dimensions of the vectors.
const Dims = 256

// synonyms are groups of words the model takes as one.
var synonyms = map[string]string{}

func init() {
	for _, group := range []string{
		"car automobile vehicle motorcar",
		"doctor physician medic",
		"holiday vacation",
		"purchase buy bought",
		"film movie cinema",
		"salary wage pay compensation",
		"flat apartment",
		"dog puppy canine hound",
		"cat kitten feline",
		"trip journey voyage travel",
		"beginning start commence",
		"repair fix mend",
	} {
		words := strings.Fields(group)
		for _, w := range words {
			synonyms[w] = words[0]
		}
	}
}

// Vector is the model's vector of text.
func Vector(text string) []float32 {
	v := make([]float32, Dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 3 {
			w = strings.TrimSuffix(w, "s")
		}
		if s, ok := synonyms[w]; ok {
			w = s
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		x := h.Sum32()
		sign := float32(1)
		if x&(1<<31) != 0 {
			sign = -1
		}
		v[x%Dims] += sign
	}
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Server is a running embedding server.
type Server struct {
	*httptest.Server
	// Fail, when not 0, is the status every request is answered with.
	Fail atomic.Int32
	// FailNext answers that many requests with 503 (with Retry-After: 0)
	// before answering normally.
	FailNext atomic.Int32

	mu       sync.Mutex
	requests int
	texts    []string
}

// Start starts a server; it stops when the test ends (Close).
func Start() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests is how many requests asked for vectors (failed ones included).
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Texts are the texts embedded so far, in order.
func (s *Server) Texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	if code := s.Fail.Load(); code != 0 {
		http.Error(w, `{"error":"the embedding server is failing on purpose"}`, int(code))
		return
	}
	if s.FailNext.Add(-1) >= 0 {
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
		return
	}
	s.FailNext.Store(0)
	var texts []string
	var reply func([][]float32) any
	switch {
	case r.URL.Path == "/v1/embeddings":
		var req struct {
			Input []string `json:"input"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		texts = req.Input
		reply = func(vs [][]float32) any {
			type item struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			data := make([]item, len(vs))
			for i, v := range vs {
				data[i] = item{Index: i, Embedding: v}
			}
			return map[string]any{"data": data}
		}
	case strings.HasSuffix(r.URL.Path, ":batchEmbedContents"):
		var req struct {
			Requests []struct {
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || r.Header.Get("x-goog-api-key") == "" {
			http.Error(w, "bad request or no key", http.StatusBadRequest)
			return
		}
		for _, q := range req.Requests {
			var b strings.Builder
			for _, p := range q.Content.Parts {
				b.WriteString(p.Text)
			}
			texts = append(texts, b.String())
		}
		reply = func(vs [][]float32) any {
			type item struct {
				Values []float32 `json:"values"`
			}
			out := make([]item, len(vs))
			for i, v := range vs {
				out[i] = item{Values: v}
			}
			return map[string]any{"embeddings": out}
		}
	case r.URL.Path == "/api/embed":
		var req struct {
			Input []string `json:"input"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		texts = req.Input
		reply = func(vs [][]float32) any { return map[string]any{"embeddings": vs} }
	default:
		http.NotFound(w, r)
		return
	}
	vs := make([][]float32, len(texts))
	for i, t := range texts {
		vs[i] = Vector(t)
	}
	s.mu.Lock()
	s.texts = append(s.texts, texts...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply(vs))
}
