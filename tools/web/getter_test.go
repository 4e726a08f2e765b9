package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// TestGetterFollowsWebFetchRules gets a body with web_fetch's settings: a
// host allowHosts lists is reached (a redirect within it followed), one it
// does not list is refused, and a body over maxResponseBytes is an error
// rather than a cut file.
func TestGetterFollowsWebFetchRules(t *testing.T) {
	t.Parallel()
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/pic", http.StatusFound)
		case "/pic":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, "not really a png")
		case "/big":
			io.WriteString(w, strings.Repeat("x", 200))
		}
	}))
	settings := func(hosts ...any) *tool.Context {
		return &tool.Context{Config: tool.Config{web.FetchConfigKey: map[string]any{"allowHosts": hosts, "maxResponseBytes": 100}}}
	}
	g, err := web.NewGetter(settings(s.hostPort()), web.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	body, ct, err := g.Get(context.Background(), s.URL+"/moved", "image/*")
	if err != nil || string(body) != "not really a png" || ct != "image/png" {
		t.Errorf("Get = %q, %q, %v; want the body and type after the redirect", body, ct, err)
	}
	if _, _, err := g.Get(context.Background(), s.URL+"/big", "*/*"); !tool.IsInputError(err) || !strings.Contains(err.Error(), "maxResponseBytes") {
		t.Errorf("a body over the limit: %v, want an error naming maxResponseBytes", err)
	}
	closed, err := web.NewGetter(settings(), web.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	hits := s.hits.Load()
	if _, _, err := closed.Get(context.Background(), s.URL+"/pic", "image/*"); !tool.IsInputError(err) || !strings.Contains(err.Error(), "allowHosts") {
		t.Errorf("a loopback host not allowed: %v, want the guard's refusal", err)
	}
	if s.hits.Load() != hits {
		t.Error("the refused request reached the server")
	}
}
