// Command web measures web_fetch of a 2 MB news page (internal/webtest's
// NewsPage: an article, ad labels, boilerplate and 1,300 comments, served
// on 127.0.0.1) as a whole process, beside two floors that fetch the same
// page and print its article's text: go-readability (this module's copy,
// bench/web/goreadability) and Mozilla's Readability on jsdom
// (bench/web/mozilla.js, installed with npm into a cache directory as
// .ci/run installs server-everything). Toolbelt's side is `toolbelt call
// web_fetch` with extractMode text. In interleaved rounds it records each
// side's wall and CPU time (rusage), and prints their medians, the size of
// each side's text, how many of the article's key sentences it kept and how
// many kinds of boilerplate it did not remove, with the load average.
// See bench/web.md.
//
//	go run ./bench/web [-rounds 5] [-comments 1300]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
	"github.com/toolbelt/toolbelt/internal/webtest"
)

// The Mozilla side's packages, pinned.
const (
	readabilityVersion = "0.6.0"
	jsdomVersion       = "28.1.0" // the newest whose engines include Node 20
)

func main() {
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	comments := flag.Int("comments", 1300, "comments on the page")
	flag.Parse()
	page, keys := webtest.NewsPage(*comments)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	defer srv.Close()

	dir, bin, remove := harness.Setup("bench-web-", "")
	defer remove()
	goread := harness.Build(dir, "goreadability", "./bench/web/goreadability")
	nodePath := mozilla()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	host := strings.TrimPrefix(srv.URL, "http://")
	harness.Check(os.WriteFile(cfg, []byte(fmt.Sprintf("tools:\n  web_fetch:\n    allowHosts: [%q]\n    cacheTtl: 0s\n", host)), 0o644))
	env := harness.Env(dir, cfg)

	type side struct {
		name string
		cmd  func(url string) *exec.Cmd
		text func(out []byte) string
		s    harness.Sample
		last string
	}
	sides := []*side{
		{name: "toolbelt call web_fetch (text)", cmd: func(url string) *exec.Cmd {
			return harness.Call(bin, env, "web_fetch", "", fmt.Sprintf(`{"url":%q,"extractMode":"text","maxChars":1000000}`, url))
		}, text: func(out []byte) string {
			var msg struct{ Content []struct{ Text string } }
			harness.Check(json.Unmarshal(out, &msg))
			if len(msg.Content) == 0 {
				log.Fatalf("web_fetch printed no content: %s", out)
			}
			return msg.Content[0].Text
		}},
		{name: "go-readability", cmd: func(url string) *exec.Cmd { return exec.Command(goread, url) }},
		{name: "Mozilla Readability " + readabilityVersion + " (jsdom " + jsdomVersion + ")", cmd: func(url string) *exec.Cmd {
			c := exec.Command("node", "bench/web/mozilla.js", url)
			c.Env = append(os.Environ(), "NODE_PATH="+nodePath)
			return c
		}},
	}
	load0 := harness.LoadAverage()
	for r := range *rounds {
		for i := range sides {
			s := sides[(r+i)%len(sides)] // each round starts with the next side
			url := fmt.Sprintf("%s/news/harbour?round=%d", srv.URL, r)
			out, wall, cpu := harness.Timed(s.cmd(url))
			s.s.Add(wall, cpu)
			if s.text != nil {
				s.last = s.text(out)
			} else {
				s.last = string(out)
			}
		}
	}
	fmt.Printf("web_fetch of a %.1f MB page with %d comments; %s\n", float64(len(page))/(1<<20), *comments, harness.Machine())
	fmt.Printf("load average: %s before, %s after; %d rounds, interleaved\n", load0, harness.LoadAverage(), *rounds)
	fmt.Printf("| side | wall p50 | CPU p50 | text bytes | key sentences kept | boilerplate kept |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, s := range sides {
		w, c := s.s.Medians()
		kept := 0
		for _, k := range keys {
			if strings.Contains(s.last, k) {
				kept++
			}
		}
		var junk []string
		for _, b := range webtest.Boilerplate {
			if strings.Contains(s.last, b) {
				junk = append(junk, fmt.Sprintf("%q", b))
			}
		}
		fmt.Printf("| %s | %s | %s | %d | %d of %d | %d %s |\n", s.name, harness.Ms(w), harness.Ms(c), len(s.last), kept, len(keys), len(junk), strings.Join(junk, " "))
	}
	fmt.Printf("toolbelt ÷ go-readability: %s; toolbelt ÷ Mozilla: %s\n", harness.Ratio(&sides[0].s, &sides[1].s), harness.Ratio(&sides[0].s, &sides[2].s))
}

// mozilla installs @mozilla/readability and jsdom, once, into the user's
// cache directory and returns their node_modules directory.
func mozilla() string {
	if _, err := exec.LookPath("node"); err != nil {
		log.Fatal("Mozilla's Readability runs on Node.js: apt-get install -y nodejs npm")
	}
	cache, err := os.UserCacheDir()
	harness.Check(err)
	dir := filepath.Join(cache, "toolbelt", "npm", "readability-"+readabilityVersion+"-jsdom-"+jsdomVersion)
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "jsdom", "package.json")); err == nil {
		return modules
	}
	cmd := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error",
		"@mozilla/readability@"+readabilityVersion, "jsdom@"+jsdomVersion)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	harness.Check(cmd.Run())
	return modules
}
