package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// served is what n requests for GET /calls measured.
type served struct {
	times []time.Duration
	bytes int
	rows  int
}

// serverTimes times n requests for GET /calls, from sending the request
// to reading the last byte of the page, one after another on one
// keep-alive connection (after three to warm up).
func serverTimes(base string, n int) served {
	var s served
	get := func() time.Duration {
		t0 := time.Now()
		resp, err := http.Get(base + "/calls")
		harness.Check(err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		harness.Check(err)
		d := time.Since(t0)
		s.bytes, s.rows = len(body), strings.Count(string(body), `<tr id="call-`)
		return d
	}
	for range 3 {
		get()
	}
	for range n {
		s.times = append(s.times, get())
	}
	return s
}

func printServerTimes(s served) {
	fmt.Printf("GET /calls, %d requests in turn on one connection, request to last byte: median %s, p95 %s, max %s; %s of HTML listing %d calls\n",
		len(s.times), ms(harness.Quantile(s.times, .5)), ms(harness.Quantile(s.times, .95)), ms(harness.Quantile(s.times, 1)), kb(s.bytes), s.rows)
}

// paint is what the page's Performance API said of one navigation, in
// milliseconds from its start, and how many calls the page lists.
type paint struct {
	TTFB, DCL, FCP, Load float64
	Rows                 int
}

// paintJS waits for the page's first contentful paint (five seconds at
// most) and reads its navigation's timings and rows.
const paintJS = `new Promise((resolve) => {
  const report = () => {
    const n = performance.getEntriesByType("navigation")[0];
    const p = performance.getEntriesByName("first-contentful-paint")[0];
    resolve({TTFB: n.responseStart, DCL: n.domContentLoadedEventEnd, FCP: p ? p.startTime : -1, Load: n.loadEventEnd,
      Rows: document.querySelectorAll("#calls tbody tr").length});
  };
  if (performance.getEntriesByName("first-contentful-paint").length) return report();
  new PerformanceObserver((list, obs) => {
    if (list.getEntriesByName("first-contentful-paint").length) { obs.disconnect(); report(); }
  }).observe({type: "paint", buffered: true});
  setTimeout(report, 5000);
})`

// render opens url n times in headless Chromium (a fresh profile under
// dir) with its cache cleared, and n times with the page's CSS and script
// cached, in turn; it returns the cold and the warm navigations.
func render(ctx context.Context, chromium, dir, url string, n int) (cold, warm []paint) {
	profile, err := os.MkdirTemp(dir, "chromium")
	harness.Check(err)
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium), chromedp.UserDataDir(filepath.Clean(profile))}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
		"disable-background-networking", "disable-component-update", "disable-sync"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	open := func(clear bool) paint {
		steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate("about:blank")}
		if clear {
			steps = append(steps, clearCache())
		}
		harness.Check(chromedp.Do(bctx, append(steps, chromedp.Navigate(url))...))
		p, err := chromedp.Run(bctx, chromedp.Evaluate[paint](paintJS, chromedp.EvalAwaitPromise))
		harness.Check(err)
		return p
	}
	open(false) // starts the browser
	for range n {
		cold = append(cold, open(true))
		warm = append(warm, open(false))
	}
	return cold, warm
}

// clearCache empties the browser's cache.
func clearCache() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
		return err
	})
}

func printRenders(cold, warm []paint) {
	fmt.Println("\nHeadless Chromium, navigation to /calls, the page's Performance API (ms from the navigation's start):")
	fmt.Println()
	fmt.Println("| cache | navigations | first byte | DOMContentLoaded | first contentful paint | load | calls listed |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, s := range []struct {
		name string
		ps   []paint
	}{{"cleared", cold}, {"CSS and script cached", warm}} {
		field := func(f func(paint) float64) string {
			var xs []float64
			for _, p := range s.ps {
				xs = append(xs, f(p))
			}
			return fmt.Sprintf("%.0f (%.0f–%.0f)", harness.Median(xs), slices.Min(xs), slices.Max(xs))
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %d |\n", s.name, len(s.ps),
			field(func(p paint) float64 { return p.TTFB }), field(func(p paint) float64 { return p.DCL }),
			field(func(p paint) float64 { return p.FCP }), field(func(p paint) float64 { return p.Load }), s.ps[0].Rows)
	}
	fmt.Println("\nMedians (and ranges); -1 would be a paint not seen within 5 s.")
}

// ms is a duration in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
