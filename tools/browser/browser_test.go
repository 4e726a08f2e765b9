package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image"
	_ "image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/chromium"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/browser"
)

// testPage is the page the tests drive: a form, a button that writes a
// greeting, one that replaces the first (its ref goes stale), a select, a
// file input, and a tall block (a full-page screenshot is taller than
// the viewport).
const testPage = `<!doctype html>
<html><head><title>Test page</title></head><body>
<h1>Sign up</h1>
<form action="/done" method="get">
  <label>Name <input name="name" id="name"></label>
  <select id="color" aria-label="Color"><option value="r">Red</option><option value="g">Green</option></select>
  <input type="file" id="file" aria-label="Attachment">
  <button type="submit">Send</button>
</form>
<button type="button" id="greet">Greet</button>
<button type="button" id="replace">Replace the greet button</button>
<p id="out"></p>
<a href="/download">Download the report</a>
<div style="height: 3000px">tall</div>
<script>
const bind = () => document.getElementById("greet").onclick = () => {
  const f = document.getElementById("file").files;
  document.getElementById("out").textContent = "Hello, " + document.getElementById("name").value +
    " (" + document.getElementById("color").value + (f.length ? ", " + f[0].name : "") + ")";
};
bind();
document.getElementById("replace").onclick = () => {
  const b = document.createElement("button");
  b.id = "greet"; b.type = "button"; b.textContent = "Greet";
  document.getElementById("greet").replaceWith(b);
  bind();
};
console.log("page ready");
</script>
</body></html>`

// harness runs the browser tool through the real pipeline, with a
// Manager whose profiles live in a directory of the test's.
type harness struct {
	t        *testing.T
	ws       string
	asked    []invoke.Confirmation // the questions a person was asked, answered yes
	records  []audit.Record
	mu       sync.Mutex
	m        *browser.Manager
	runner   *invoke.Runner
	profiles string
	site     *httptest.Server
	n        atomic.Int64
}

// newHarness starts a test site on 127.0.0.1 and a Manager; the test is
// skipped when Chromium is not installed. The site's host is allowed.
func newHarness(t *testing.T) *harness { return newHarnessWith(t, invoke.Config{}, nil) }

// newHarnessWith is newHarness with the pipeline's configuration cfg and
// more of the tool's settings.
func newHarnessWith(t *testing.T, cfg invoke.Config, settings map[string]any) *harness {
	t.Helper()
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error() + "; .ci/run installs it: the browser tool's tests drive it")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, testPage)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	mux.HandleFunc("/done", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>Sent</title><p>Thanks, %s</p>", html.EscapeString(r.URL.Query().Get("name")))
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
		io.WriteString(w, "the report")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	h := &harness{t: t, profiles: t.TempDir(), site: site}
	h.m = browser.NewManager(browser.Options{Dir: h.profiles, Getenv: func(string) string { return "" }})
	t.Cleanup(func() {
		if err := h.m.Close(); err != nil {
			t.Errorf("closing the manager: %v", err)
		}
	})
	reg := registry.New()
	if err := browser.Register(reg, h.m); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	fs, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	settings = maps.Clone(settings)
	if settings == nil {
		settings = map[string]any{}
	}
	settings["allowHosts"] = []any{strings.TrimPrefix(site.URL, "http://")}
	tc := &tool.Context{
		Identity: tool.Identity{Workspace: ws, SessionKey: "s-" + t.Name(), Owner: true}, FSRoot: ws, FS: fs,
		Config: tool.Config{browser.ConfigKey: settings},
	}
	h.ws = ws
	confirm := invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.asked = append(h.asked, c)
		return invoke.Answer{Allow: true, By: "test"}, nil
	})
	h.runner = invoke.New(reg, tc, invoke.WithConfig(cfg), invoke.WithConfirmer(confirm), invoke.WithAudit(auditFunc(h.record)), invoke.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return h
}

// auditFunc is an invoke.Auditor made of a function.
type auditFunc func(audit.Record)

func (f auditFunc) Append(_ context.Context, r audit.Record) error { f(r); return nil }

// record keeps an audit record.
func (h *harness) record(r audit.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
}

// questions returns the reasons of the questions asked since the last
// look, and forgets them.
func (h *harness) questions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.asked {
		out = append(out, c.Reason)
	}
	h.asked = nil
	return out
}

// call runs the browser tool with args and returns the text of its result
// (its error's, for an error) and the result message.
func (h *harness) call(args map[string]any) (string, tool.ResultMessage) {
	h.t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	msg := h.runner.Run(context.Background(), tool.Call{ID: fmt.Sprintf("call_%d", h.n.Add(1)), Name: "browser", Arguments: b})
	var parts []string
	for _, c := range msg.Content {
		if c.Type == tool.TextContent {
			parts = append(parts, c.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if env, ok := tool.ParseEnvelope(text); ok && msg.IsError {
		text = env.Error + env.Reason
	}
	return text, msg
}

// ok runs a call that must succeed, returning its text.
func (h *harness) ok(args map[string]any) string {
	h.t.Helper()
	text, msg := h.call(args)
	if msg.IsError {
		h.t.Fatalf("%v failed: %s", args, text)
	}
	return text
}

// updateScreenshots writes the pictures docs/browser.md shows into
// docs/browser/.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the screenshots of docs/browser.md into docs/browser/")

// docScreenshot writes a screenshot of the current tab as
// docs/browser/NAME.png when the test runs with -update-screenshots.
func (h *harness) docScreenshot(name string) {
	h.t.Helper()
	if !*updateScreenshots {
		return
	}
	_, msg := h.call(map[string]any{"action": "screenshot"})
	dir := filepath.Join("..", "..", "docs", "browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	for _, c := range msg.Content {
		if c.Type == tool.ImageContent {
			b, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				h.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
				h.t.Fatal(err)
			}
		}
	}
}

// refOf returns the ref of the snapshot line with role and name.
func refOf(t *testing.T, snapshot, role, name string) string {
	t.Helper()
	label := ` "` + regexp.QuoteMeta(name) + `"`
	if name == "" {
		label = ""
	}
	re := regexp.MustCompile(`- ` + role + label + `[^\n]*\[ref=(e\d+)\]`)
	m := re.FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("no %s %q with a ref in the snapshot:\n%s", role, name, snapshot)
	}
	return m[1]
}

// chromiumLeft returns the processes whose command line names a profile
// under dir.
func chromiumLeft(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var left []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte("--user-data-dir="+dir+"/")) {
			left = append(left, e.Name()+": "+strings.ReplaceAll(string(cmdline[:min(len(cmdline), 80)]), "\x00", " "))
		}
	}
	return left
}

// TestBrowserSnapshotsAndActsByRef: a page of the local site opens; its
// snapshot has the title, the address and the form with refs; typing by
// ref, selecting and clicking by ref change the page; a ref survives a
// snapshot of the same element, and goes stale when the element is
// replaced.
func TestBrowserSnapshotsAndActsByRef(t *testing.T) {
	h := newHarnessWith(t, invoke.Config{Images: content.ImageLimits{MaxSide: 8000, MaxBytes: 50 << 20}}, nil)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	snap := h.ok(map[string]any{"action": "snapshot"})
	for _, want := range []string{"Page: Test page", "URL: " + h.site.URL + "/", `- heading "Sign up" [level=1]`, `- textbox "Name"`, `- combobox "Color"`} {
		if !strings.Contains(snap, want) {
			t.Errorf("the snapshot lacks %q:\n%s", want, snap)
		}
	}
	name, greet, color := refOf(t, snap, "textbox", "Name"), refOf(t, snap, "button", "Greet"), refOf(t, snap, "combobox", "Color")
	h.ok(map[string]any{"action": "act", "kind": "type", "ref": name, "text": "Ada"})
	h.ok(map[string]any{"action": "act", "kind": "select", "ref": color, "values": []string{"Green"}})
	h.ok(map[string]any{"action": "act", "kind": "click", "ref": greet})
	snap = h.ok(map[string]any{"action": "snapshot"})
	if !strings.Contains(snap, `Hello, Ada (g)`) {
		t.Errorf("after typing, selecting and clicking, the page lacks the greeting:\n%s", snap)
	}
	h.docScreenshot("greeted")
	t.Logf("the snapshot docs/browser.md shows:\n%s", snap)
	if again := refOf(t, snap, "button", "Greet"); again != greet {
		t.Errorf("the Greet button's ref changed from %s to %s though the element is the same", greet, again)
	}

	h.ok(map[string]any{"action": "act", "kind": "click", "ref": refOf(t, snap, "button", "Replace the greet button")})
	text, msg := h.call(map[string]any{"action": "act", "kind": "click", "ref": greet})
	if !msg.IsError || !strings.Contains(text, "ref "+greet+" is stale") || !strings.Contains(text, "take a new snapshot") {
		t.Errorf("a click on the replaced element's ref: %s", text)
	}
	text, msg = h.call(map[string]any{"action": "act", "kind": "click", "ref": "e999"})
	if !msg.IsError || !strings.Contains(text, "ref e999 is stale") {
		t.Errorf("a click on an unknown ref: %s", text)
	}
	snap = h.ok(map[string]any{"action": "snapshot"})
	if fresh := refOf(t, snap, "button", "Greet"); fresh == greet {
		t.Errorf("the new Greet button has the old one's ref %s", fresh)
	}
}

// TestBrowserScreenshots: the viewport, the whole page and one element,
// as PNG and JPEG images that decode to the expected sizes (the pipeline
// allowed images as large as the page); with the pipeline's default
// limits, the full page is scaled down to them.
func TestBrowserScreenshots(t *testing.T) {
	h := newHarnessWith(t, invoke.Config{Images: content.ImageLimits{MaxSide: 8000, MaxBytes: 50 << 20}}, nil)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	snap := h.ok(map[string]any{"action": "snapshot"})
	heading := refOf(t, snap, "heading", "Sign up")
	size := func(args map[string]any, mime string) image.Point {
		t.Helper()
		// h is read when size is called: the test replaces it below.
		_, msg := h.call(args)
		if msg.IsError {
			t.Fatalf("%v: %+v", args, msg.Content)
		}
		for _, c := range msg.Content {
			if c.Type != tool.ImageContent {
				continue
			}
			if c.MIMEType != mime {
				t.Errorf("%v: an image of type %s, want %s", args, c.MIMEType, mime)
			}
			b, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				t.Fatal(err)
			}
			cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%v: the image does not decode: %v", args, err)
			}
			return image.Pt(cfg.Width, cfg.Height)
		}
		t.Fatalf("%v: no image in the result", args)
		return image.Point{}
	}
	view := size(map[string]any{"action": "screenshot"}, "image/png")
	if view.X != 1280 || view.Y < 500 || view.Y > 900 {
		t.Errorf("the viewport's screenshot is %v, want 1280 wide and at most the window's 900 high", view)
	}
	if full := size(map[string]any{"action": "screenshot", "fullPage": true, "type": "jpeg"}, "image/jpeg"); full.X != 1280 || full.Y < 3000 {
		t.Errorf("the full page's screenshot is %v, want 1280 wide and over 3000 high (the page's tall block)", full)
	}
	if el := size(map[string]any{"action": "screenshot", "ref": heading}, "image/png"); el.X >= 1280 || el.Y > 100 || el.Y < 10 {
		t.Errorf("the heading's screenshot is %v, want the heading's box", el)
	}

	h = newHarness(t)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	if full := size(map[string]any{"action": "screenshot", "fullPage": true}, "image/jpeg"); full.Y != content.DefaultMaxSide || full.X >= full.Y {
		t.Errorf("with the default limits the full page's screenshot is %v, want %d high", full, content.DefaultMaxSide)
	}
}

// TestBrowserScreenshotOfAURL: a screenshot given a url pictures that page
// in a tab of its own at the width and height asked, and closes it: the
// current tab stays as it was. A host tools.browser.allowHosts does not
// list is refused as open refuses it, and width without url is refused.
func TestBrowserScreenshotOfAURL(t *testing.T) {
	h := newHarness(t)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/done?name=first"})
	_, msg := h.call(map[string]any{"action": "screenshot", "url": h.site.URL + "/", "width": 640, "height": 480})
	if msg.IsError {
		t.Fatalf("screenshot of a url: %+v", msg.Content)
	}
	var img []byte
	for _, c := range msg.Content {
		if c.Type == tool.ImageContent && c.MIMEType == "image/png" {
			img, _ = base64.StdEncoding.DecodeString(c.Data)
		}
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil || cfg.Width != 640 || cfg.Height != 480 {
		t.Errorf("the screenshot is %dx%d (%v), want a 640x480 PNG", cfg.Width, cfg.Height, err)
	}
	if tabs := h.ok(map[string]any{"action": "tabs"}); strings.Count(tabs, "targetId=") != 1 || !strings.Contains(tabs, "name=first") {
		t.Errorf("the screenshot's tab is left open, or the current tab changed:\n%s", tabs)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer other.Close()
	if text, msg := h.call(map[string]any{"action": "screenshot", "url": other.URL + "/"}); !msg.IsError || !strings.Contains(text, "refused") {
		t.Errorf("a screenshot of a private host not allowed: %s", text)
	}
	if text, msg := h.call(map[string]any{"action": "screenshot", "width": 640}); !msg.IsError || !strings.Contains(text, "give the url") {
		t.Errorf("width without url: %s", text)
	}
}

// TestBrowserRefusesPrivateAddresses: the allowed site opens, but every
// other spelling of loopback, another loopback port, and a redirect from
// the allowed site to loopback are refused, saying why.
func TestBrowserRefusesPrivateAddresses(t *testing.T) {
	h := newHarness(t)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	port := h.site.URL[strings.LastIndexByte(h.site.URL, ':')+1:]
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer other.Close()
	for _, u := range []string{
		"http://localhost:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://127.0.0.2:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://0x7f000001:" + strings.TrimPrefix(other.URL, "http://127.0.0.1:") + "/",
		other.URL + "/",
		h.site.URL + "/redirect?to=" + other.URL + "/",
	} {
		text, msg := h.call(map[string]any{"action": "navigate", "url": u})
		if !msg.IsError || !strings.Contains(text, "refused") {
			t.Errorf("navigating to %s: %s", u, text)
		}
	}
	if snap := h.ok(map[string]any{"action": "snapshot"}); strings.Contains(snap, "secret") {
		t.Errorf("a refused page's text reached the model:\n%s", snap)
	}
}

// TestBrowserRestartsAfterACrashAndLeavesNoProcess: Chromium killed, the
// next call starts it again and says so; after Close no process of its
// profiles is left.
func TestBrowserRestartsAfterACrashAndLeavesNoProcess(t *testing.T) {
	h := newHarness(t)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	status := h.ok(map[string]any{"action": "status"})
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("status names no pid: %s", status)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	text := h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	if !strings.Contains(text, "started again") {
		t.Errorf("the call after the crash does not say the browser was started again: %s", text)
	}
	if snap := h.ok(map[string]any{"action": "snapshot"}); !strings.Contains(snap, "Sign up") {
		t.Errorf("after the restart the page is not there:\n%s", snap)
	}
	if len(chromiumLeft(h.profiles)) == 0 {
		t.Fatal("no Chromium process found for the profiles while the browser runs: the check below would prove nothing")
	}
	if err := h.m.Close(); err != nil {
		t.Fatal(err)
	}
	if left := chromiumLeft(h.profiles); len(left) > 0 {
		t.Errorf("Chromium processes left after Close: %q", left)
	}
	if entries, _ := os.ReadDir(h.profiles); len(entries) > 0 {
		t.Errorf("profiles left after Close: %v", entries)
	}
}

// TestCaptureTakesAPreviewsPicture: Capture pictures a page on loopback
// that no setting allows (the caller vouches for it) at the size asked,
// and closes its tab.
func TestCaptureTakesAPreviewsPicture(t *testing.T) {
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error())
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, testPage) }))
	defer site.Close()
	m := browser.NewManager(browser.Options{Dir: t.TempDir()})
	defer m.Close()
	for _, o := range []browser.CaptureOptions{{Width: 800, Height: 600}, {Width: 390, Height: 844, FullPage: true, Type: "jpeg"}} {
		b, err := m.Capture(context.Background(), "canvas-1", site.URL+"/", o)
		if err != nil {
			t.Fatal(err)
		}
		img, format, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%+v: the picture does not decode: %v", o, err)
		}
		want := map[string]string{"": "png", "jpeg": "jpeg"}[o.Type]
		if format != want || img.Width != o.Width || (o.FullPage && img.Height < 3000) || (!o.FullPage && img.Height != o.Height) {
			t.Errorf("%+v: a %s of %d×%d", o, format, img.Width, img.Height)
		}
	}
}

// TestInspectEvaluatesInThePageAtTheViewport: Inspect loads a page on
// loopback at the viewport asked and returns what a script (a promise,
// awaited) measures in it.
func TestInspectEvaluatesInThePageAtTheViewport(t *testing.T) {
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error())
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, testPage) }))
	defer site.Close()
	m := browser.NewManager(browser.Options{Dir: t.TempDir()})
	defer m.Close()
	out, err := m.Inspect(context.Background(), "preview", site.URL+"/", browser.CaptureOptions{Width: 375, Height: 812},
		`Promise.resolve({width: innerWidth, height: innerHeight, buttons: document.querySelectorAll("button").length})`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Width, Height, Buttons int }
	if err := json.Unmarshal(out, &got); err != nil || got.Width != 375 || got.Height != 812 || got.Buttons == 0 {
		t.Errorf("Inspect returned %s (%v)", out, err)
	}
}

// TestBrowserAsksBeforeRiskyActionsAndAuditsThePage: reading and acting on
// the allowed site ask nobody; evaluate, upload, a form sent to a host not
// allowed and a PDF written outside the workspace ask first, saying why;
// every call's audit record names the page it acted on.
func TestBrowserAsksBeforeRiskyActionsAndAuditsThePage(t *testing.T) {
	h := newHarness(t)
	page := h.site.URL + "/"
	h.ok(map[string]any{"action": "open", "url": page})
	snap := h.ok(map[string]any{"action": "snapshot"})
	h.ok(map[string]any{"action": "act", "kind": "click", "ref": refOf(t, snap, "button", "Greet")})
	h.ok(map[string]any{"action": "pdf", "path": "page.pdf"})
	if q := h.questions(); len(q) > 0 {
		t.Errorf("reading, clicking a plain button and a PDF in the workspace asked: %q", q)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "page.pdf")); err != nil || !bytes.HasPrefix(b, []byte("%PDF")) {
		t.Errorf("the PDF in the workspace: %v, %.8q", err, b)
	}
	for _, r := range h.records {
		if !strings.Contains(r.Effect, page) {
			t.Errorf("the audit record of %s names no page: %q", r.Arguments, r.Effect)
		}
	}

	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "page.pdf")
	for _, c := range []struct {
		args map[string]any
		why  string
	}{
		{map[string]any{"action": "act", "kind": "evaluate", "fn": "() => document.title"}, "evaluate runs JavaScript"},
		{map[string]any{"action": "upload", "ref": refOf(t, snap, "button", "Attachment"), "paths": []string{"notes.txt"}}, "upload hands workspace files"},
		{map[string]any{"action": "pdf", "path": outside}, "outside the workspace"},
	} {
		text := h.ok(c.args)
		if q := h.questions(); len(q) != 1 || !strings.Contains(q[0], c.why) {
			t.Errorf("%v asked %q, want one question saying %q", c.args, q, c.why)
		}
		if c.args["kind"] == "evaluate" && !strings.Contains(text, "Test page") {
			t.Errorf("evaluate returned %q", text)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the approved PDF outside the workspace: %v", err)
	}
	h.ok(map[string]any{"action": "act", "kind": "click", "ref": refOf(t, snap, "button", "Greet")})
	if snap := h.ok(map[string]any{"action": "snapshot"}); !strings.Contains(snap, "notes.txt") {
		t.Errorf("the uploaded file is not in the file input:\n%s", snap)
	}
	h.questions()

	// The form's action is the site's own host, allowed: sent without a
	// question. Pointed at a host not allowed, its submit button asks.
	h.ok(map[string]any{"action": "act", "kind": "click", "ref": refOf(t, snap, "button", "Send")})
	h.ok(map[string]any{"action": "act", "kind": "wait", "text": "Thanks"})
	if q := h.questions(); len(q) > 0 {
		t.Errorf("a form sent to an allowed host asked: %q", q)
	}
	h.ok(map[string]any{"action": "navigate", "url": page})
	snap = h.ok(map[string]any{"action": "snapshot"})
	h.ok(map[string]any{"action": "act", "kind": "evaluate", "fn": `() => document.querySelector("form").action = "https://forms.example/collect"`})
	h.questions()
	text, _ := h.call(map[string]any{"action": "act", "kind": "press", "key": "Enter", "ref": refOf(t, snap, "textbox", "Name")})
	if q := h.questions(); len(q) != 1 || !strings.Contains(q[0], "forms.example") {
		t.Errorf("Enter in a form sent to forms.example asked %q (%s)", q, text)
	}
}

// TestBrowserIsUnavailableWithoutChromium: a Manager that cannot find its
// Chromium leaves the tool listed as unavailable, the reason saying how
// to install it.
func TestBrowserIsUnavailableWithoutChromium(t *testing.T) {
	reg := registry.New()
	m := browser.NewManager(browser.Options{Chromium: filepath.Join(t.TempDir(), "chromium")})
	defer m.Close()
	if err := browser.Register(reg, m); err != nil {
		t.Fatal(err)
	}
	var why error
	if _, ok := reg.Resolve("browser", &tool.Context{}, func(_ string, err error) { why = err }); ok {
		t.Fatal("the browser tool resolved without a Chromium")
	}
	if why == nil || !strings.Contains(why.Error(), "apt-get install chromium") {
		t.Errorf("the reason it is unavailable: %v", why)
	}
}

// TestBrowserSnapshotIsBoundedAndAsksForParts: a snapshot longer than
// maxChars is cut at a line's end with a notice giving the offset of the
// rest, which the next snapshot returns; a ref's part is that subtree.
func TestBrowserSnapshotIsBoundedAndAsksForParts(t *testing.T) {
	h := newHarness(t)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	whole := h.ok(map[string]any{"action": "snapshot"})
	first := h.ok(map[string]any{"action": "snapshot", "maxChars": 200})
	m := regexp.MustCompile(`snapshot cut here: characters 0–(\d+) of (\d+) shown\. Ask for the rest with offset=(\d+)`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("a snapshot cut at 200 characters has no notice:\n%s", first)
	}
	if strings.Contains(first, `"Replace the greet button"`) {
		t.Errorf("the first part holds the end of the page:\n%s", first)
	}
	rest := h.ok(map[string]any{"action": "snapshot", "offset": m[3], "maxChars": 100000})
	if !strings.Contains(rest, `button "Replace the greet button"`) || strings.Contains(rest, "snapshot cut here") {
		t.Errorf("the rest from offset %s:\n%s", m[3], rest)
	}
	form := h.ok(map[string]any{"action": "snapshot", "ref": refOf(t, whole, "form", "")})
	if !strings.Contains(form, `button "Send"`) || strings.Contains(form, `heading "Sign up"`) || !strings.Contains(form, "Part: ") {
		t.Errorf("the form's part:\n%s", form)
	}
}

// TestBrowserTabsDialogsAndConsole: tabs open up to the cap and close;
// focus switches the current tab; a dialog the page opens is reported and
// answered; the console keeps the page's messages; a download lands in
// the workspace's downloads folder.
func TestBrowserTabsDialogsAndConsole(t *testing.T) {
	h := newHarness(t)
	first := h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	id := regexp.MustCompile(`Opened tab (\S+)\.`).FindStringSubmatch(first)
	if id == nil {
		t.Fatalf("open names no tab: %s", first)
	}
	for range browser.DefaultMaxTabs - 1 {
		h.ok(map[string]any{"action": "open", "url": h.site.URL + "/done?name=more"})
	}
	if text, msg := h.call(map[string]any{"action": "open", "url": h.site.URL + "/"}); !msg.IsError || !strings.Contains(text, "limit") {
		t.Errorf("a tab beyond the cap: %s", text)
	}
	h.ok(map[string]any{"action": "close"})
	if tabs := h.ok(map[string]any{"action": "tabs"}); strings.Count(tabs, "targetId=") != browser.DefaultMaxTabs-1 {
		t.Errorf("after closing one, the tabs:\n%s", tabs)
	}
	h.ok(map[string]any{"action": "focus", "targetId": id[1]})
	if console := h.ok(map[string]any{"action": "console"}); !strings.Contains(console, "log: page ready") {
		t.Errorf("the console of the first tab: %s", console)
	}

	snap := h.ok(map[string]any{"action": "snapshot"})
	h.ok(map[string]any{"action": "act", "kind": "evaluate", "fn": `() => { document.getElementById("greet").onclick = () => { document.getElementById("out").textContent = confirm("Sure?") ? "yes" : "no"; }; }`})
	clicked := h.ok(map[string]any{"action": "act", "kind": "click", "ref": refOf(t, snap, "button", "Greet")})
	if !strings.Contains(clicked, `confirm dialog`) || !strings.Contains(clicked, "Sure?") {
		t.Errorf("a click that opens a dialog says: %s", clicked)
	}
	h.ok(map[string]any{"action": "dialog", "accept": false})
	if snap := h.ok(map[string]any{"action": "snapshot"}); !strings.Contains(snap, `text "no"`) {
		t.Errorf("the dismissed confirm's answer is not on the page:\n%s", snap)
	}

	h.ok(map[string]any{"action": "act", "kind": "click", "ref": refOf(t, snap, "link", "Download the report")})
	report := filepath.Join(h.ws, "downloads", "report.txt")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(report); err == nil && string(b) == "the report" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the download did not land in %s", report)
		}
	}
}
