package canvas_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	canvastool "github.com/toolbelt/toolbelt/tools/canvas"
)

// setup returns a runner of the canvas tool for session s1 in a
// workspace (with a protected file), and the host served on 127.0.0.1.
func setup(t *testing.T) (*invoke.Runner, *canvas.Host, string) {
	t.Helper()
	ws := t.TempDir()
	for name, text := range map[string]string{"site/index.html": "<h1>Hello</h1>", "site/.env": "SECRET=1"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := fsbridge.OpenLocal(ws, fsbridge.Conceal(filepath.Join(ws, "site", ".env")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	h := canvas.New("")
	t.Cleanup(func() { _ = h.Close() })
	srv := httptest.NewServer(http.StripPrefix("/canvas", h.Handler()))
	t.Cleanup(srv.Close)
	h.SetBase(srv.URL + "/canvas/")
	reg := registry.New()
	if err := canvastool.Register(reg); err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws, SessionKey: "s1"}, FSRoot: ws, FS: b}
	canvastool.HostService.Set(tc, h)
	return invoke.New(reg, tc), h, srv.URL + "/canvas/s1/"
}

func call(t *testing.T, r *invoke.Runner, args string) tool.ResultMessage {
	t.Helper()
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: "canvas", Arguments: json.RawMessage(args)})
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestActionsReturnTheURL: every action's result names the canvas URL.
func TestActionsReturnTheURL(t *testing.T) {
	t.Parallel()
	r, _, url := setup(t)
	for _, args := range []string{
		`{"action":"present","html":"<p>hi</p>"}`,
		`{"action":"navigate","url":"https://example.com/"}`,
		`{"action":"hide"}`,
		`{"action":"a2ui_push","jsonl":"{\"version\":\"v0.9\",\"createSurface\":{\"surfaceId\":\"a\",\"catalogId\":\"c\"}}"}`,
		`{"action":"a2ui_reset"}`,
		`{"action":"present","path":"site/index.html"}`,
	} {
		m := call(t, r, args)
		if m.IsError || !strings.Contains(m.Content[0].Text, url) {
			t.Errorf("%s: %+v", args, m.Content)
		}
	}
}

// TestPushRefusedNamesLineAndField: an invalid push comes back as an
// error naming the line and the field, and the canvas is unchanged.
func TestPushRefusedNamesLineAndField(t *testing.T) {
	t.Parallel()
	r, h, url := setup(t)
	good := `{"version":"v0.9","createSurface":{"surfaceId":"a","catalogId":"c"}}`
	bad := `{"version":"v0.9","updateComponents":{"surfaceId":"a","components":[{"id":"root","component":"Slider","value":3}]}}`
	args, _ := json.Marshal(map[string]string{"action": "a2ui_push", "jsonl": good + "\n" + bad})
	m := call(t, r, string(args))
	text := m.Content[0].Text
	if !m.IsError || !strings.Contains(text, "line 2: updateComponents.components[0]") || !strings.Contains(text, "max") || !strings.Contains(text, url) {
		t.Errorf("result: %s", text)
	}
	if st := h.State("s1"); len(st.Surfaces) != 0 {
		t.Errorf("the refused push made surfaces: %+v", st.Surfaces)
	}
}

// TestPresentPathServesThroughTheBridge: a presented workspace file is
// served with its neighbours, but not a file the bridge hides, and not a
// path outside the workspace.
func TestPresentPathServesThroughTheBridge(t *testing.T) {
	t.Parallel()
	r, _, url := setup(t)
	if m := call(t, r, `{"action":"present","path":"site/index.html"}`); m.IsError {
		t.Fatalf("present: %+v", m.Content)
	}
	if code, body := get(t, url+"files/index.html"); code != 200 || body != "<h1>Hello</h1>" {
		t.Errorf("index.html: %d %q", code, body)
	}
	if code, body := get(t, url+"files/.env"); code != 404 || strings.Contains(body, "SECRET") {
		t.Errorf("a hidden file was served: %d %q", code, body)
	}
	if m := call(t, r, `{"action":"present","path":"../outside.html"}`); !m.IsError {
		t.Errorf("a path outside the workspace was presented: %+v", m.Content)
	}
}

// TestEvalNeedsApproval: eval is a high-risk call, refused when nobody
// can approve it; the other actions need no approval.
func TestEvalNeedsApproval(t *testing.T) {
	t.Parallel()
	r, _, _ := setup(t)
	m := call(t, r, `{"action":"eval","javaScript":"document.title"}`)
	if !strings.Contains(m.Content[0].Text, `"status":"blocked"`) || !strings.Contains(m.Content[0].Text, "JavaScript") {
		t.Errorf("eval without approval: %s", m.Content[0].Text)
	}
}

// TestSnapshotWithoutBrowser: without a browser, snapshot says so and
// where to look instead.
func TestSnapshotWithoutBrowser(t *testing.T) {
	t.Parallel()
	r, _, url := setup(t)
	m := call(t, r, `{"action":"snapshot"}`)
	if !m.IsError || !strings.Contains(m.Content[0].Text, "chromium") || !strings.Contains(m.Content[0].Text, url) {
		t.Errorf("snapshot: %+v", m.Content)
	}
}
