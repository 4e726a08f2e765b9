package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/chromium"
)

// TestNodeScreenshotAndCanvas: a gateway (toolbelt serve) and nodes
// (toolbelt node) in processes of their own. A node with Chromium offers
// screenshot and canvas: a screenshot of a page an httptest server serves
// on 127.0.0.1 (a host the node's tools.browser.allowHosts lists) comes
// back as a PNG of the size asked, showing the page; another loopback
// server is refused by the node's network rules; the canvas capability
// presents HTML on the node's canvas and returns a picture of it. A node
// without Chromium offers neither, and a call of screenshot is refused
// saying what it offers; a node whose policy denies the browser tool
// refuses the screenshot with the reason.
func TestNodeScreenshotAndCanvas(t *testing.T) {
	t.Parallel()
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error() + ": a node's screenshot and canvas drive it")
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>Blue</title><body style="margin:0;background:#2f6fde"><h1>the lab's page</h1>`)
	}))
	defer page.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer other.Close()

	gwEnv := cliEnvironment(t)
	banner, _ := serveBanner(t, os.Args[0], gwEnv, "--addr", "127.0.0.1:0", "--workspace", t.TempDir())
	addr := bannerAddr(t, banner)
	gateway := "http://" + addr
	pair := func(name, config string, env []string) *nodeProcess {
		t.Helper()
		node := startNodeProcess(t, env, "--config", writeConfig(t, config), "--gateway", gateway, "--workspace", t.TempDir(), "--name", name)
		code := node.await(t, `pairing code ([A-Z0-9]{4}-[A-Z0-9]{4}):`)[1]
		runCLIWith(t, gwEnv, "", "", "nodes", "approve", code).expect(t, 0)
		node.await(t, `connected to 127\.0\.0\.1:\d+#\w+ as `+name)
		// Stopped as on Ctrl-C, before startNodeProcess's kill, the node
		// stops its Chromium and removes its profile before the test's
		// directories are removed: its output ends when it has exited.
		t.Cleanup(func() {
			_ = node.cmd.Process.Signal(os.Interrupt)
			timeout := time.After(60 * time.Second)
			for {
				select {
				case _, ok := <-node.lines:
					if ok {
						continue
					}
				case <-timeout:
				}
				return
			}
		})
		return node
	}
	// A node without Chromium: nothing named chromium on its PATH.
	bare := cliEnvironment(t)
	bare = append(slices.DeleteFunc(bare, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }), "PATH="+t.TempDir())
	pair("lab", "tools:\n  browser:\n    allowHosts: [\""+strings.TrimPrefix(page.URL, "http://")+"\"]\n", cliEnvironment(t))
	pair("bare", "{}\n", bare)
	pair("locked", "tools:\n  deny: [browser]\n", cliEnvironment(t))

	caps := map[string][]string{}
	for _, n := range listNodes(t, gwEnv).Nodes {
		caps[n.Name] = n.Capabilities
	}
	for name, want := range map[string]bool{"lab": true, "bare": false, "locked": true} {
		if got := slices.Contains(caps[name], "screenshot") && slices.Contains(caps[name], "canvas"); got != want {
			t.Errorf("node %s offers %v; screenshot and canvas offered: %v, want %v", name, caps[name], got, want)
		}
	}
	r := runCLIWith(t, gwEnv, "", "", "call", "nodes", "--yes", "--args", `{"action":"describe","node":"lab"}`).expect(t, 0)
	if !strings.Contains(r.stdout, `"screenshot"`) || !strings.Contains(r.stdout, `"canvas"`) {
		t.Errorf("describe does not show the browser's capabilities: %s", r.stdout)
	}

	invoke := func(node, capability, params string, code int) cliResult {
		t.Helper()
		return runCLIWith(t, gwEnv, "", "", "call", "nodes", "--yes", "--json", "--args",
			`{"action":"invoke","node":"`+node+`","capability":"`+capability+`","params":`+params+`}`).expect(t, code)
	}
	img := invokedPNG(t, invoke("lab", "screenshot", `{"url":"`+page.URL+`/","width":640,"height":480}`, 0))
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
		t.Errorf("the screenshot is %v, want 640×480", b)
	}
	if c := color.RGBAModel.Convert(img.At(600, 400)).(color.RGBA); c.R != 0x2f || c.G != 0x6f || c.B != 0xde {
		t.Errorf("the screenshot does not show the page's blue: %v", c)
	}
	if r := invoke("lab", "screenshot", `{"url":"`+other.URL+`/"}`, 1); !strings.Contains(r.stdout, "refused") {
		t.Errorf("a loopback host the node does not allow: %s", r.stdout)
	}
	if r := invoke("lab", "screenshot", `{"url":"`+page.URL+`/","action":"act"}`, 1); !strings.Contains(r.stdout, "unknown field") || !strings.Contains(r.stdout, "screenshot takes params") {
		t.Errorf("params beyond a screenshot's: %s", r.stdout)
	}

	// The canvas: HTML presented on the node's canvas, pictured (the page
	// shows it in a frame below the canvas's bar, 70% of the height).
	r = invoke("lab", "canvas", `{"action":"present","html":"<body style='margin:0;background:#2f6fde'><p>on the node</p>","width":400,"height":300}`, 0)
	if !strings.Contains(r.stdout, "The canvas shows the HTML") {
		t.Errorf("present: %s", r.stdout)
	}
	img = invokedPNG(t, r)
	if b := img.Bounds(); b.Dx() != 400 || b.Dy() != 300 {
		t.Errorf("the canvas's picture is %v, want 400×300", b)
	}
	if c := color.RGBAModel.Convert(img.At(200, 150)).(color.RGBA); c.R != 0x2f || c.G != 0x6f || c.B != 0xde {
		t.Errorf("the canvas's picture does not show the presented page: %v", c)
	}

	// A node without a browser refuses, saying what it offers; a node
	// whose policy denies the browser refuses with the rule.
	if r := invoke("bare", "screenshot", `{"url":"`+page.URL+`/"}`, 1); !strings.Contains(r.stdout, "node bare does not offer") || !strings.Contains(r.stdout, `it offers run, notify, read, write, status\\n`) {
		t.Errorf("a node without a browser: %s", r.stdout)
	}
	if r := invoke("locked", "screenshot", `{"url":"https://example.com/"}`, 1); !strings.Contains(r.stdout, "deny browser") {
		t.Errorf("a node whose policy denies the browser: %s", r.stdout)
	}
}

// invokedPNG returns the PNG image in the result message toolbelt call
// --json printed.
func invokedPNG(t *testing.T, r cliResult) image.Image {
	t.Helper()
	var msg struct {
		Content []struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	for _, c := range msg.Content {
		if c.Type == "image" && c.MIMEType == "image/png" {
			b, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			return img
		}
	}
	t.Fatalf("no PNG in the result: %.2000s", r.stdout)
	return nil
}
