package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/tool"
)

// BenchmarkCallsPage measures the calls page's first render — the request
// that lists the newest calls — with 10,000 calls in the audit log, and
// reports the page's weight (HTML, CSS and script) in bytes.
func BenchmarkCallsPage(b *testing.B) {
	s := serve(b, false)
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	for i := range 10_000 {
		r := audit.Record{Time: t0.Add(time.Duration(i) * time.Millisecond), CallID: fmt.Sprintf("bench-%d", i), Tool: "read",
			SessionKey: "s-1", Channel: "bench", Arguments: []byte(`{"path":"notes.txt"}`), Duration: time.Millisecond}
		if err := s.tb.Record(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	weight := 0
	for _, asset := range []string{"/assets/console.css", "/assets/console.js"} {
		weight += len(fetchPage(b, s.srv.URL+asset))
	}
	html := 0
	b.ResetTimer()
	for b.Loop() {
		html = len(fetchPage(b, s.srv.URL+"/calls"))
	}
	b.ReportMetric(float64(html+weight), "page-bytes")
}

func fetchPage(b *testing.B, url string) []byte {
	res, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return body
}

// BenchmarkCallsWhileWatched measures calls through a runner of the root
// with no console page open, and with the calls page's live stream open
// (the feed's events rendered and sent as they come, the audit log polled).
func BenchmarkCallsWhileWatched(b *testing.B) {
	for _, watched := range []bool{false, true} {
		b.Run(fmt.Sprintf("watched=%v", watched), func(b *testing.B) {
			s := serve(b, false)
			if watched {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", s.srv.URL+"/calls/events", nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer res.Body.Close()
				go io.Copy(io.Discard, res.Body)
			}
			r, err := s.tb.Runner(testCaller)
			if err != nil {
				b.Fatal(err)
			}
			call := tool.Call{Name: "ls", Arguments: []byte(`{}`)}
			i := 0
			for b.Loop() {
				i++
				call.ID = fmt.Sprintf("c-%d", i)
				if msg := r.Run(context.Background(), call); msg.IsError {
					b.Fatalf("%+v", msg)
				}
			}
		})
	}
}
