package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// BenchmarkExtract2MB fetches and extracts a 2 MB article page from a
// loopback server, as Markdown and as text: almost all of the time is the
// extraction (readability, then the conversion).
func BenchmarkExtract2MB(b *testing.B) {
	page := hugePage(2 << 20)
	srv := benchServer(b, page, "text/html; charset=utf-8")
	for _, mode := range []string{"markdown", "text"} {
		b.Run(mode, func(b *testing.B) {
			run := benchTool(b, srv)
			b.SetBytes(int64(len(page)))
			defer reportCPU(b)()
			for b.Loop() {
				run(map[string]any{"url": srv.URL + "/", "extractMode": mode})
			}
		})
	}
}

// BenchmarkFetchOverhead compares a plain net/http GET of a small page on
// loopback with web_fetch of the same page (guard, fresh connection,
// extraction, result shaping): the difference is what the tool adds.
func BenchmarkFetchOverhead(b *testing.B) {
	page := readTestdata(b, "article.html")
	srv := benchServer(b, page, "text/html; charset=utf-8")
	b.Run("net-http-get", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		defer reportCPU(b)()
		for b.Loop() {
			resp, err := client.Get(srv.URL + "/")
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("web_fetch", func(b *testing.B) {
		run := benchTool(b, srv)
		defer reportCPU(b)()
		for b.Loop() {
			run(map[string]any{"url": srv.URL + "/"})
		}
	})
	plain := benchServer(b, []byte("just text\n"), "text/plain")
	b.Run("web_fetch-plain-text", func(b *testing.B) {
		run := benchTool(b, plain)
		defer reportCPU(b)()
		for b.Loop() {
			run(map[string]any{"url": plain.URL + "/"})
		}
	})
}

func benchServer(b *testing.B, body []byte, ct string) *server {
	s := &server{}
	s.Server = newTestServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Write(body)
	}))
	b.Cleanup(s.Close)
	return s
}

// benchTool returns a function that runs web_fetch directly (no pipeline),
// allowed to reach srv, without a cache.
func benchTool(b *testing.B, srv *server) func(map[string]any) {
	tc := &tool.Context{Config: tool.Config{web.FetchConfigKey: map[string]any{"allowHosts": []string{srv.hostPort()}, "maxChars": 1_000_000}}}
	reg := newRegistry(b)
	t, ok := reg.Resolve("web_fetch", tc, func(id string, err error) { b.Fatal(err) })
	if !ok {
		b.Fatal("web_fetch not resolved")
	}
	return func(args map[string]any) {
		raw, _ := json.Marshal(args)
		res, err := t.Execute(context.Background(), tool.Call{ID: "bench", Arguments: raw}, tc, func(tool.Result) {})
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res.Content)
		}
	}
}

// reportCPU reports the process's CPU time per operation (user and
// system, the in-process test server and the garbage collector included)
// next to the wall time, which a busy machine inflates.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}
