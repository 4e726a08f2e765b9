// Command api is a fake video generation service for the async tools demo:
// POST /generate starts a "render" that takes -render (10 s by default);
// GET /tasks/ID reports its progress; when the render is done, the result
// is POSTed to the webhook URL the request gave, signed the Standard
// Webhooks way with $TOOLBELT_WEBHOOK_SECRET, and the delivery is retried
// until the receiver answers 2xx (so a webhook sent while the server is
// down arrives once it is back). A request with an idempotency key already
// seen returns the same task and starts nothing new.
//
//	go run ./examples/async-video/api -addr 127.0.0.1:7430
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/jobs"
)

type task struct {
	ID         string    `json:"id"`
	JobID      string    `json:"jobId"` // the caller's id of the work (Toolbelt's job)
	Prompt     string    `json:"prompt"`
	Started    time.Time `json:"-"`
	WebhookURL string    `json:"-"`
}

type api struct {
	mu      sync.Mutex
	byKey   map[string]*task
	byID    map[string]*task
	render  time.Duration
	secret  string
	submits int
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7430", "address to listen on")
	render := flag.Duration("render", 10*time.Second, "how long a render takes")
	flag.Parse()
	a := &api{byKey: map[string]*task{}, byID: map[string]*task{}, render: *render, secret: os.Getenv("TOOLBELT_WEBHOOK_SECRET")}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The address on the first line of standard output, for scripts.
	fmt.Printf("video API listening on http://%s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /generate", a.generate)
	mux.HandleFunc("GET /tasks/{id}", a.status)
	mux.HandleFunc("GET /stats", a.stats)
	log.Fatal(http.Serve(ln, mux))
}

func (a *api) generate(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Prompt         string `json:"prompt"`
		IdempotencyKey string `json:"idempotencyKey"`
		JobID          string `json:"jobId"`
		WebhookURL     string `json:"webhookUrl"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.IdempotencyKey == "" {
		http.Error(w, "want JSON with prompt and idempotencyKey", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	t, seen := a.byKey[in.IdempotencyKey]
	if !seen {
		a.submits++
		t = &task{ID: "vid_" + rand.Text()[:10], JobID: in.JobID, Prompt: in.Prompt, Started: time.Now(), WebhookURL: in.WebhookURL}
		a.byKey[in.IdempotencyKey], a.byID[t.ID] = t, t
	}
	a.mu.Unlock()
	if !seen && t.WebhookURL != "" {
		go a.deliver(t)
	}
	json.NewEncoder(w).Encode(map[string]string{"id": t.ID})
}

// outcome is how a task stands: progress, and the result once rendered.
func (a *api) outcome(t *task) map[string]any {
	p := int(100 * time.Since(t.Started) / a.render)
	if p >= 100 {
		return map[string]any{"id": t.ID, "jobId": t.JobID, "status": "completed", "progress": 100,
			"result": map[string]string{"url": "https://videos.example.com/" + t.ID + ".mp4", "prompt": t.Prompt}}
	}
	return map[string]any{"id": t.ID, "jobId": t.JobID, "status": "processing", "progress": p, "message": "rendering"}
}

func (a *api) status(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	t, ok := a.byID[r.PathValue("id")]
	a.mu.Unlock()
	if !ok {
		http.Error(w, "no such task", http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(a.outcome(t))
}

func (a *api) stats(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]int{"submits": a.submits})
}

// deliver POSTs the finished render to the webhook, once a second until
// the receiver takes it (a 2xx answer). Every attempt has the same
// webhook-id, so a receiver that got it twice applies it once.
func (a *api) deliver(t *task) {
	time.Sleep(time.Until(t.Started.Add(a.render)))
	body, _ := json.Marshal(a.outcome(t))
	id := "msg_" + t.ID
	for attempt := 1; ; attempt++ {
		now := time.Now()
		sig, err := jobs.Sign(a.secret, id, now, body)
		if err != nil {
			log.Printf("webhook for %s: %v", t.ID, err)
			return
		}
		req, _ := http.NewRequest(http.MethodPost, t.WebhookURL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		req.Header.Set("webhook-signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				log.Printf("webhook for %s delivered (attempt %d)", t.ID, attempt)
				return
			}
			log.Printf("webhook for %s: %s (attempt %d)", t.ID, resp.Status, attempt)
		}
		time.Sleep(time.Second)
	}
}
