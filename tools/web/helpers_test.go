package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/sessions"
	"github.com/toolbelt/toolbelt/tools/web"
)

// harness runs the web tools through the real pipeline.
type harness struct {
	t      *testing.T
	runner *invoke.Runner
	reg    *registry.Registry
	tc     *tool.Context
	n      atomic.Int64
}

type setup struct {
	fetch, search map[string]any // tools.web_fetch / tools.web_search
	opts          web.Options
	cache         bool      // a real SQLite cache
	cacheImpl     web.Cache // or this one
	maxResult     int       // the pipeline's MaxResultChars
}

func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	reg := registry.New()
	if s.opts.Getenv == nil {
		s.opts.Getenv = func(string) string { return "" }
	}
	if err := web.Register(reg, s.opts); err != nil {
		t.Fatal(err)
	}
	if err := sessions.Register(reg); err != nil {
		t.Fatal(err)
	}
	cfg := tool.Config{}
	if s.fetch != nil {
		cfg[web.FetchConfigKey] = s.fetch
	}
	if s.search != nil {
		cfg[web.SearchConfigKey] = s.search
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: t.TempDir(), Owner: true}, Config: cfg}
	if s.cache {
		st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		web.CacheService.Set(tc, st.Cache(store.CacheOptions{}))
	}
	if s.cacheImpl != nil {
		web.CacheService.Set(tc, s.cacheImpl)
	}
	ic := invoke.Config{}
	if s.maxResult > 0 {
		ic.MaxResultChars = s.maxResult
	}
	r := invoke.New(reg, tc, invoke.WithConfig(ic), invoke.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return &harness{t: t, runner: r, reg: reg, tc: tc}
}

// call runs one call and returns its text (all text blocks joined) and the
// result message.
func (h *harness) call(name string, args map[string]any) (string, tool.ResultMessage) {
	h.t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	id := fmt.Sprintf("call_%d", h.n.Add(1))
	msg := h.runner.Run(context.Background(), tool.Call{ID: id, Name: name, Arguments: b})
	var parts []string
	for _, c := range msg.Content {
		if c.Type == tool.TextContent {
			parts = append(parts, c.Text)
		}
	}
	text := strings.Join(parts, "\n")
	var env tool.Envelope
	if msg.IsError && json.Unmarshal([]byte(text), &env) == nil && env.Error != "" {
		text = env.Error
	}
	return text, msg
}

func (h *harness) fetch(args map[string]any) (string, tool.ResultMessage) {
	h.t.Helper()
	return h.call("web_fetch", args)
}

// details returns a result's details as a map.
func details(t *testing.T, msg tool.ResultMessage) map[string]any {
	t.Helper()
	b, err := json.Marshal(msg.Details)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("details %s: %v", b, err)
	}
	return m
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// server is a test HTTP server on 127.0.0.1 that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	s := &server{}
	s.Server = newTestServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func newTestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

func newRegistry(tb testing.TB) *registry.Registry {
	tb.Helper()
	reg := registry.New()
	if err := web.Register(reg, web.Options{Getenv: func(string) string { return "" }}); err != nil {
		tb.Fatal(err)
	}
	return reg
}

// hostPort is the server's "127.0.0.1:PORT".
func (s *server) hostPort() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *server) port() string {
	_, p, _ := net.SplitHostPort(s.hostPort())
	return p
}

// fakeResolver answers names from a table; a name with several answers
// gives them in turn (the last one repeats), as a rebinding DNS server does.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newResolver(answers map[string][][]string) *fakeResolver {
	return &fakeResolver{answers: answers, calls: map[string]int{}}
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	var out []net.IPAddr
	for _, s := range seq[i] {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func (r *fakeResolver) count(host string) int {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// fakeDialer connects addresses of fake public hosts to local servers and
// 127.0.0.1 to itself; it records every address it is asked for and fails
// the others, so no test reaches the internet.
type fakeDialer struct {
	mu     sync.Mutex
	routes map[string]string // "ip:port" → "127.0.0.1:port"
	dialed []string
}

func (d *fakeDialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	to, ok := d.routes[addr]
	d.mu.Unlock()
	if !ok {
		if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
			return nil, fmt.Errorf("test dialer: no route to %s", addr)
		}
		to = addr
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

func (d *fakeDialer) addrs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}
