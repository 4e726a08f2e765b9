package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"io"
	"log"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// resource is one response's weight.
type resource struct {
	path string
	// raw is its body's size uncompressed; gz gzipped at Go's default
	// level (6), or as the server sent it when it compressed it.
	raw, gz int
	// encoding is the Content-Encoding the server answered with, to a
	// request that accepts gzip.
	encoding string
}

// page is a page's weight: its HTML and what it loads.
type page struct {
	html   resource
	assets []resource
}

// fetch gets url as a browser would (accepting gzip) and returns its
// uncompressed body and its weight.
func fetch(url string) ([]byte, resource) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	harness.Check(err)
	// Set by hand, so the transport hands back the body as sent; serve
	// answers GET / with a plain-text page unless HTML is accepted.
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Accept", "text/html,*/*;q=0.8")
	resp, err := http.DefaultClient.Do(req)
	harness.Check(err)
	defer resp.Body.Close()
	sent, err := io.ReadAll(resp.Body)
	harness.Check(err)
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("GET %s: %s: %s", url, resp.Status, sent)
	}
	r := resource{path: resp.Request.URL.Path, encoding: resp.Header.Get("Content-Encoding")}
	body := sent
	if r.encoding == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(sent))
		harness.Check(err)
		body, err = io.ReadAll(zr)
		harness.Check(err)
		r.gz = len(sent)
	} else {
		r.gz = gzipped(body)
	}
	r.raw = len(body)
	return body, r
}

// gzipped is the size of b gzipped at the default level.
func gzipped(b []byte) int {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	harness.Check(err)
	harness.Check(zw.Close())
	return buf.Len()
}

var (
	navBlock  = regexp.MustCompile(`(?s)<nav[^>]*>(.*?)</nav>`)
	href      = regexp.MustCompile(`href="(/[^"]*)"`)
	callLink  = regexp.MustCompile(`href="(/calls/[^"/]+)"`)
	loaded    = regexp.MustCompile(`<(?:link|script|img)\b[^>]*?\b(?:href|src)="(/[^"]*)"`)
	cssImages = regexp.MustCompile(`url\(["']?(/[^"')]+)`)
)

// weigh weighs every page of the console at base: those its navigation
// links, the page of the newest call, and the login page.
func weigh(base string) []page {
	home, _ := fetch(base + "/")
	var paths []string
	if m := navBlock.FindSubmatch(home); m != nil {
		for _, l := range href.FindAllSubmatch(m[1], -1) {
			paths = append(paths, html.UnescapeString(string(l[1])))
		}
	}
	calls, _ := fetch(base + "/calls")
	if m := callLink.FindSubmatch(calls); m != nil {
		paths = append(paths, html.UnescapeString(string(m[1])))
	}
	paths = append(paths, "/login")
	var pages []page
	for _, p := range paths {
		body, r := fetch(base + p)
		pages = append(pages, page{html: r, assets: assetsOf(base, body)})
	}
	return pages
}

// assetsOf weighs what an HTML page loads from its own server: its
// stylesheets, scripts and images, and the images its stylesheets load.
func assetsOf(base string, body []byte) []resource {
	var out []resource
	var seen []string
	var load func(b []byte, re *regexp.Regexp)
	load = func(b []byte, re *regexp.Regexp) {
		for _, m := range re.FindAllSubmatch(b, -1) {
			p := html.UnescapeString(string(m[1]))
			if slices.Contains(seen, p) {
				continue
			}
			seen = append(seen, p)
			asset, r := fetch(base + p)
			out = append(out, r)
			if strings.HasSuffix(p, ".css") {
				load(asset, cssImages)
			}
		}
	}
	load(body, loaded)
	return out
}

// printWeights prints a table of the pages' weights and says whether the
// server compressed any response.
func printWeights(pages []page) {
	fmt.Println("| page | HTML | HTML gzipped | what it loads | gzipped | total | total gzipped |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	var encodings []string
	var assets []resource
	note := func(r resource) {
		if r.encoding != "" && !slices.Contains(encodings, r.encoding) {
			encodings = append(encodings, r.encoding)
		}
	}
	for _, p := range pages {
		note(p.html)
		var raw, gz int
		var names []string
		for _, a := range p.assets {
			note(a)
			raw, gz = raw+a.raw, gz+a.gz
			names = append(names, a.path)
			if !slices.ContainsFunc(assets, func(b resource) bool { return b.path == a.path }) {
				assets = append(assets, a)
			}
		}
		fmt.Printf("| %s | %s | %s | %s (%s) | %s | %s | %s |\n", p.html.path, kb(p.html.raw), kb(p.html.gz),
			kb(raw), strings.Join(names, ", "), kb(gz), kb(p.html.raw+raw), kb(p.html.gz+gz))
	}
	for _, a := range assets {
		fmt.Printf("\n%s: %s, %s gzipped", a.path, kb(a.raw), kb(a.gz))
	}
	fmt.Println()
	if len(encodings) == 0 {
		fmt.Println("\nThe server compressed no response (Accept-Encoding: gzip was sent): the gzipped sizes are what gzip -6 would make of them.")
	} else {
		fmt.Printf("\nThe server compressed responses with %s.\n", strings.Join(encodings, ", "))
	}
}

// kb is a size in kilobytes (1,000 bytes) with one decimal.
func kb(n int) string { return fmt.Sprintf("%.1f kB", float64(n)/1000) }
