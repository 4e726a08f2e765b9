package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// pushes is what the A2UI rounds measured.
type pushes struct {
	call, render []time.Duration // each push's answer; each push's text on the page
	cpu          []time.Duration // the server tree's CPU per push, each round
}

// a2uiStream is the JSONL a push sends: an A2UI v0.8 surface (what
// OpenClaw's agents emit) of a title, a list of 20 items bound to the data
// model and a button, its data, and the order to render it; title is the
// text the page is watched for.
func a2uiStream(title string) string {
	type obj = map[string]any
	text := func(id string, t any) obj {
		return obj{"id": id, "component": obj{"Text": obj{"text": t}}}
	}
	var items []obj
	for i := range 20 {
		items = append(items, obj{"key": fmt.Sprint(i), "valueMap": []obj{{"key": "label", "valueString": fmt.Sprintf("Item %d of the order", i+1)}}})
	}
	lines := []obj{
		{"surfaceUpdate": obj{"surfaceId": "bench", "components": []obj{
			{"id": "root", "component": obj{"Column": obj{"children": obj{"explicitList": []string{"title", "items", "ok"}}}}},
			text("title", obj{"literalString": title}),
			{"id": "items", "component": obj{"List": obj{"children": obj{"template": obj{"componentId": "item", "dataBinding": "/items"}}}}},
			text("item", obj{"path": "label"}),
			{"id": "ok", "component": obj{"Button": obj{"child": "ok-label", "action": obj{"name": "confirm"}}}},
			text("ok-label", obj{"literalString": "Confirm"}),
		}}},
		{"dataModelUpdate": obj{"surfaceId": "bench", "path": "/items", "contents": items}},
		{"beginRendering": obj{"surfaceId": "bench", "root": "root"}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		harness.Check(err)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// push is the canvas tool's call that pushes a2uiStream(title).
func push(title string) *sdk.CallToolParams {
	return &sdk.CallToolParams{Name: "canvas", Arguments: map[string]any{"action": "a2ui_push", "jsonl": a2uiStream(title)}}
}

// canvasURL is the canvas URL a canvas call's answer gives.
var canvasURL = regexp.MustCompile(`http://[^\s"]+/canvas/[^\s"]*`)

// watchJS arms the page to note, in window.seen, the time (ms since the
// epoch, the clock the harness reads too) of the first frame drawn after
// the text %q is in the page.
const watchJS = `(() => {
  window.seen = 0;
  const want = %q;
  const check = () => {
    if (window.seen || !document.body.textContent.includes(want)) return;
    obs.disconnect();
    requestAnimationFrame(() => { window.seen = performance.timeOrigin + performance.now(); });
  };
  const obs = new MutationObserver(check);
  obs.observe(document.body, {subtree: true, childList: true, characterData: true});
  check();
  return true;
})()`

// measureA2UI runs rounds of the A2UI push to render on Toolbelt: a fresh
// server, a first push that makes the surface, the canvas page opened in
// a headless Chromium of the harness's own (its profile under dir), then
// n pushes of the surface with a new title each, each timed from the call
// to the first frame drawn with the new title.
func measureA2UI(ctx context.Context, tb *side, chromium, dir string, rounds, n int) pushes {
	profile, err := os.MkdirTemp(dir, "viewer")
	harness.Check(err)
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium), chromedp.UserDataDir(filepath.Clean(profile)),
		chromedp.WindowSize(1280, 720)}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "no-first-run",
		"disable-background-networking", "disable-component-update", "disable-sync"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	defer cancel()
	page, cancel := chromedp.NewContext(actx)
	defer cancel()

	var p pushes
	for r := range rounds {
		ses, err := open(ctx, tb)
		if err != nil {
			log.Fatalf("%s: %v", tb.name, err)
		}
		first := fmt.Sprintf("Round %d", r)
		u := canvasURL.FindString(text(ses.call(ctx, push(first))))
		if u == "" {
			ses.fail("a2ui_push answered no canvas URL")
		}
		harness.Check(chromedp.Do(page, chromedp.Navigate(u)))
		arm(page, first)
		wait(page, first)
		cpu := harness.TreeCPU(ses.pid())
		for i := range n {
			title := fmt.Sprintf("Round %d, push %d", r, i)
			arm(page, title)
			start := time.Now()
			ses.call(ctx, push(title))
			p.call = append(p.call, time.Since(start))
			seen := wait(page, title)
			p.render = append(p.render, time.UnixMicro(int64(seen*1000)).Sub(start))
		}
		p.cpu = append(p.cpu, (harness.TreeCPU(ses.pid())-cpu)/time.Duration(n))
		ses.close()
	}
	return p
}

// arm makes the page note when it has drawn title (watchJS).
func arm(page context.Context, title string) {
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](fmt.Sprintf(watchJS, title)))
	harness.Check(err)
}

// wait waits until the page has drawn the title it was armed for and
// returns the time it noted, in ms since the epoch.
func wait(page context.Context, title string) float64 {
	ctx, cancel := context.WithTimeout(page, 30*time.Second)
	defer cancel()
	seen, err := chromedp.Run(ctx, chromedp.Poll[float64](`window.seen`))
	if err != nil {
		log.Fatalf("the canvas page did not show %q: %v", title, err)
	}
	return seen
}

// printPushes prints the A2UI figures: medians and ranges.
func printPushes(p pushes, rounds, n int) {
	fmt.Printf("\n%d rounds of %d pushes, each round a fresh server; the page open in the harness's own Chromium (not counted in the CPU)\n\n", rounds, n)
	fmt.Println("| figure | Toolbelt |")
	fmt.Println("| --- | --- |")
	for _, row := range []struct {
		name string
		ds   []time.Duration
	}{
		{"a2ui_push of a 3-message v0.8 stream, to its answer (every one)", p.call},
		{"the same, to the first frame drawn with its text on the canvas page (every one)", p.render},
		{"CPU per push, the server's tree (rounds)", p.cpu},
	} {
		fmt.Printf("| %s | %s (%s–%s) |\n", row.name, ms(median(row.ds)), num(slices.Min(row.ds)), num(slices.Max(row.ds)))
	}
}
