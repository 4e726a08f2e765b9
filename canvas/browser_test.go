package canvas_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/internal/chromium"
)

// updateScreenshots writes the screenshots the browser tests take into
// docs/canvas/, for docs/canvas.md.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the canvas's screenshots into docs/canvas/")

// browserTimeout bounds one browser test.
const browserTimeout = 90 * time.Second

// browser starts a headless Chromium with a fresh profile and returns a
// tab's context; the test is skipped when Chromium is not installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := chromium.Path()
	if err != nil {
		t.Skip(err.Error() + ": the canvas's browser tests drive it")
	}
	opts := append(chromium.Options(path, t.TempDir()), chromedp.WindowSize(1000, 800))
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return tab
}

// serve serves h at /canvas/ on 127.0.0.1 and returns the server.
func serve(t *testing.T) (*canvas.Host, *httptest.Server) {
	t.Helper()
	h := canvas.New("")
	mux := http.NewServeMux()
	mux.Handle("/canvas/", http.StripPrefix("/canvas", h.Handler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	h.SetBase(srv.URL + "/canvas/")
	return h, srv
}

func run(t *testing.T, tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tab, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func value[T any](t *testing.T, tab context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(tab, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// until waits until the JavaScript predicate js holds on the page.
func until(t *testing.T, tab context.Context, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](js)); err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}

// screenshot takes the page's picture, checks it is a PNG of the window's
// width, and writes it as docs/canvas/NAME.png with -update-screenshots.
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	b := value(t, tab, "taking a screenshot", chromedp.FullScreenshot(100))
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if w := img.Bounds().Dx(); w != 1000 {
		t.Errorf("screenshot %d pixels wide, want the window's 1000", w)
	}
	if !*updateScreenshots {
		return
	}
	dir := filepath.Join("..", "docs", "canvas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func push(t *testing.T, h *canvas.Host, session, file string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Push(session, string(b)); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserRendersA2UI: a v0.8 stream and a v0.9 stream render in
// Chromium with their data bound; a data model update reaches the open
// page live; text from the model shows as text (its script does not run);
// a press of a button comes back as an action carrying what the user
// typed; eval runs in the page.
func TestBrowserRendersA2UI(t *testing.T) {
	h, srv := serve(t)
	tab := browser(t)
	push(t, h, "agent:main:main", "v08.jsonl")
	push(t, h, "agent:main:main", "v09.jsonl")
	url := h.URL("agent:main:main")
	if url != srv.URL+"/canvas/agent:main:main/" {
		t.Fatalf("URL %s", url)
	}
	run(t, tab, "opening the canvas", chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`[data-surface="trip"] [data-id="go"]`)))
	text := value(t, tab, "reading the surfaces", chromedp.Text(chromedp.CSS("#surfaces")))
	for _, want := range []string{"Coffee order", "Flat white", "Cortado", "Extra hot", "Place order", "Trip planner", "Three days by the sea", "Lisbon", "Guests", "Book it"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q:\n%s", want, text)
		}
	}
	if v := value(t, tab, "reading the name field", chromedp.Evaluate[string](`document.querySelector('[data-id="who"] input').value`)); !strings.HasPrefix(v, "Ada <script>") {
		t.Errorf("the text field shows %q", v)
	}
	screenshot(t, tab, "a2ui")

	// Escaping: markup in text is shown, not run.
	if _, err := h.Push("agent:main:main", `{"version":"v0.9","updateComponents":{"surfaceId":"trip","components":[{"id":"notes","component":"Text","text":"<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"}]}}`); err != nil {
		t.Fatal(err)
	}
	run(t, tab, "opening the notes tab", chromedp.Click(chromedp.CSS(`[data-id="tabs"] [role="tab"]:nth-child(2)`)))
	until(t, tab, "the notes show the markup as text", `document.querySelector('[data-id="notes"]')?.textContent.startsWith("<img src=x")`)
	if got := value(t, tab, "reading the page", chromedp.Evaluate[[]any](`[document.title, document.querySelectorAll("#surfaces img, #surfaces script").length]`)); got[0] != "Canvas" || got[1] != 0.0 {
		t.Errorf("markup from the model became elements: title %v, %v img/script elements", got[0], got[1])
	}

	// Live: a data model update reaches the open page.
	if _, err := h.Push("agent:main:main", `{"version":"v0.9","updateDataModel":{"surfaceId":"trip","path":"/city","value":"Porto"}}`); err != nil {
		t.Fatal(err)
	}
	until(t, tab, "the city is Porto", `document.querySelector('[data-id="city"]').textContent === "Porto"`)

	// A button press comes back with the data model's values.
	actions := make(chan canvas.Action, 1)
	defer h.Listen(func(a canvas.Action) { actions <- a })()
	run(t, tab, "ordering", chromedp.Evaluate[chromedp.Void](`(i => { i.value = ""; i.dispatchEvent(new Event("input")) })(document.querySelector('[data-id="who"] input'))`),
		chromedp.SendKeys(chromedp.CSS(`[data-id="who"] input`), "Grace"),
		chromedp.Click(chromedp.CSS(`[data-id="submit"]`)))
	select {
	case a := <-actions:
		if a.Session != "agent:main:main" || a.SurfaceID != "order" || a.Component != "submit" || a.Name != "place_order" ||
			a.Context["name"] != "Grace" || a.Context["hot"] != true || a.URL != url {
			t.Errorf("action %+v", a)
		}
		if m := a.Message(); !strings.Contains(m, `"place_order"`) || !strings.Contains(m, `"name":"Grace"`) {
			t.Errorf("message %s", m)
		}
	case <-tab.Done():
		t.Fatal("no action came back")
	}

	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	got, err := h.Eval(ctx, "agent:main:main", `document.querySelectorAll(".surface").length`)
	if err != nil || got != "2" {
		t.Errorf("eval: %q, %v", got, err)
	}
	if _, err := h.Eval(ctx, "agent:main:main", `throw new Error("boom")`); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a throwing eval: %v", err)
	}
}

// TestBrowserPresents: presented HTML shows without running its scripts,
// and a presented file is loaded again when it changes.
func TestBrowserPresents(t *testing.T) {
	h, _ := serve(t)
	tab := browser(t)
	h.Present("s", `<p id="x">static</p><script>document.getElementById("x").textContent = "ran"</script>`)
	run(t, tab, "opening the presented HTML", chromedp.Navigate(h.URL("s")+"view"), chromedp.WaitVisible(chromedp.CSS("#x")))
	if got := value(t, tab, "reading it", chromedp.Text(chromedp.CSS("#x"))); got != "static" {
		t.Errorf("the presented page's script ran: %q", got)
	}

	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := os.WriteFile(page, []byte(`<link rel="stylesheet" href="style.css"><h1>Version one</h1>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "style.css"), []byte(`h1 { color: rebeccapurple }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.PresentFile("s", os.DirFS(dir), "index.html", dir); err != nil {
		t.Fatal(err)
	}
	run(t, tab, "opening the canvas", chromedp.Navigate(h.URL("s")), chromedp.WaitVisible(chromedp.CSS("#view iframe")))
	src := value(t, tab, "reading the frame", chromedp.Evaluate[string](`document.querySelector("#view iframe").getAttribute("src")`))
	if !strings.HasPrefix(src, "files/index.html?rev=") {
		t.Fatalf("frame src %q", src)
	}
	if err := os.WriteFile(page, []byte(`<h1>Version two</h1>`), 0o644); err != nil {
		t.Fatal(err)
	}
	until(t, tab, "the frame is loaded again", `document.querySelector("#view iframe").getAttribute("src") !== `+jsString(src))
	run(t, tab, "reading the file as served", chromedp.Navigate(h.URL("s")+"files/index.html"), chromedp.WaitVisible(chromedp.CSS("h1")))
	if got := value(t, tab, "reading it", chromedp.Text(chromedp.CSS("h1"))); got != "Version two" {
		t.Errorf("served %q", got)
	}
}

func jsString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
