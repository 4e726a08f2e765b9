// Command console measures the web console `toolbelt serve` serves at /:
//
//   - the weight of every page (the pages the navigation links, a call's
//     page and the login page): its HTML and the CSS, scripts and images it
//     loads, raw and gzipped, and whether the server compresses them; with
//     the 100 calls a real MCP client has just made, then with 10,000 in
//     the audit log;
//   - the calls page with 10,000 calls in the audit log (copies, appended
//     through auditlog, of the records those 100 real calls left): the
//     server's time to answer GET /calls, and in headless Chromium the
//     time from navigation to DOMContentLoaded and to the first
//     contentful paint (the page's own Performance API), and how many rows
//     the page shows;
//   - what the calls page's live stream costs calls: calls per second
//     through serve's MCP endpoint (Go SDK clients calling read) with no
//     console open, with one and with five calls pages' event streams
//     connected and drained, interleaved round by round; the server's CPU
//     time per call; and how many of the calls each stream delivered.
//
// Run it from the repository root; it builds what it runs:
//
//	go run ./bench/console [-calls 100] [-seed 10000] [-requests 100] [-renders 10] [-rounds 6] [-seconds 5] [-clients 4] [-perf DIR]
//
// With -perf DIR, perf records the server's CPU during each throughput
// run (DIR/streams-N.*.data; read them with perf report -i).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

var (
	calls    = flag.Int("calls", 100, "real calls made before the pages are weighed")
	seeded   = flag.Int("seed", 10000, "calls in the audit log for the calls page's render")
	requests = flag.Int("requests", 100, "GET /calls requests timed")
	renders  = flag.Int("renders", 10, "navigations to /calls in Chromium, each with a cold and a warm cache")
	rounds   = flag.Int("rounds", 6, "rounds of the throughput runs (each: no stream, one, five, in a rotating order)")
	seconds  = flag.Float64("seconds", 5, "seconds of calls per throughput run")
	clients  = flag.Int("clients", 4, "concurrent MCP clients in the throughput runs")
	chromium = flag.String("chromium", "/usr/bin/chromium", "the Chromium to render with")
	perfDir  = flag.String("perf", "", "record the server's CPU with perf during each throughput run, into this directory")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	tmp, bin, remove := harness.Setup("toolbelt-console-bench", "")
	defer remove()
	ws, plain := harness.Workspace(tmp)
	ctx := context.Background()
	fmt.Printf("%s; load average %s at the start\n", harness.Machine(), harness.LoadAverage())

	// The pages with the calls a real client made.
	fresh := filepath.Join(tmp, "fresh")
	s := serve(bin, ws, plain, fresh)
	makeCalls(ctx, s.endpoint, *calls)
	waitForRows(s.base, *calls)
	fmt.Printf("\n## Page weight, %d calls in the audit log\n\n", *calls)
	printWeights(weigh(s.base))
	s.stop()

	// The same calls, copied until the audit log holds -seed of them.
	full := filepath.Join(tmp, "full")
	seed(ctx, fresh, full, *seeded)
	s = serve(bin, ws, plain, full)
	defer s.stop()
	fmt.Printf("\n## Page weight, %d calls in the audit log\n\n", *seeded)
	printWeights(weigh(s.base))

	fmt.Printf("\n## The calls page with %d calls in the audit log\n\n", *seeded)
	printServerTimes(serverTimes(s.base, *requests))
	if _, err := os.Stat(*chromium); err != nil {
		fmt.Printf("\nChromium not measured: %v\n", err)
	} else {
		printRenders(render(ctx, *chromium, tmp, s.base+"/calls", *renders))
	}

	fmt.Printf("\n## Calls per second with the console's live stream open (load average %s)\n\n", harness.LoadAverage())
	printThroughput(throughput(ctx, s, []int{0, 1, 5}))
	fmt.Printf("\nload average %s at the end\n", harness.LoadAverage())
}

// server is a running toolbelt serve.
type server struct {
	cmd      *exec.Cmd
	endpoint string // the MCP endpoint
	base     string // the console, at /
}

// serve starts toolbelt serve on a free port of 127.0.0.1, with no token
// (so the console lets loopback requests in as the owner), its state
// under dir (harness.Env).
func serve(bin, ws, config, dir string) *server {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--workspace", ws)
	cmd.Env = harness.Env(dir, config)
	endpoint := harness.Serve(cmd)
	return &server{cmd: cmd, endpoint: endpoint, base: strings.TrimSuffix(endpoint, "/mcp")}
}

// stop interrupts the server, as Ctrl-C does, so that it moves what its
// audit spool holds into the log before it exits (harness.Stop).
func (s *server) stop() { harness.Stop(s.cmd) }
