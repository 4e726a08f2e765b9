// Command browser measures Toolbelt's browser tool beside Playwright MCP
// (@playwright/mcp, the version pinned in bench/browser/package.json), both
// driven the same way — a Go SDK MCP client over stdio — on the same
// Chromium and the same local page:
//
//   - cold start: exec of the server to the answer of its first navigation
//     to the page (the server's start, the MCP handshake and the browser's
//     launch), with the time to the handshake's answer beside it;
//   - navigate + snapshot: a navigation to the page (loaded again: the
//     server says not to cache it) and the accessibility snapshot that
//     follows it, two calls;
//   - screenshot of the viewport (PNG);
//   - A2UI push to render (Toolbelt only: Playwright MCP has no canvas):
//     the canvas tool's a2ui_push until the pushed text is on the canvas
//     page, open in a Chromium of the harness's own.
//
// Each round starts each server afresh, the order of the sides rotating
// from round to round, one side at a time. Wall times are what the client
// waits for an answer; CPU is that of the server's whole process tree
// (the server, Node or Go, and every Chromium process it started; 10 ms
// ticks from /proc); memory is the tree's PSS after the round's calls.
// The load average is printed at the start and the end: the machine is
// shared.
//
// Run it from the repository root; it builds Toolbelt and installs the
// pinned Playwright MCP (npm ci, into bench/browser/node_modules) when it is
// not there:
//
//	go run ./bench/browser [-rounds 6] [-iterations 10] [-chromium PATH] [-toolbelt BIN]
package main

import (
	"context"
	"encoding/json"
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
	rounds     = flag.Int("rounds", 6, "rounds: each starts every side's server afresh")
	iterations = flag.Int("iterations", 10, "navigations + snapshots, and screenshots, per round and side")
	chromium   = flag.String("chromium", "", "the Chromium both sides drive (default: chromium on PATH)")
	tbBin      = flag.String("toolbelt", "", "a toolbelt binary to measure instead of building ./cmd/toolbelt")
)

// viewport is the viewport both sides' pages have: the window Toolbelt starts
// Chromium with (internal/chromium).
const viewport = "1280x900"

// modules is where npm installs the pinned Playwright MCP.
const modules = "bench/browser/node_modules"

func main() {
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()
	if *chromium == "" {
		p, err := exec.LookPath("chromium")
		harness.Check(err)
		*chromium = p
	}
	installPlaywright()
	tmp, bin, remove := harness.Setup("toolbelt-browser-bench", *tbBin)
	defer remove()
	url := servePage()

	fmt.Printf("%s; load average %s at the start\n", harness.Machine(), harness.LoadAverage())
	fmt.Printf("%s; Node %s; Playwright MCP %s\n\n", version(*chromium, "--version"), version("node", "--version"), playwrightVersion())
	tbi := newInstall(bin, filepath.Join(tmp, "tb"))
	var sides []*side
	for _, s := range []*side{toolbelt(tbi), playwright(*chromium, tmp)} {
		if why := s.lacks(ctx, s.browserTools()...); why != "" {
			fmt.Printf("%s not measured: %s\n\n", s.name, why)
			continue
		}
		sides = append(sides, s)
	}
	results := map[*side][]round{}
	for r := range *rounds {
		for i := range sides {
			s := sides[(r+i)%len(sides)]
			res := measure(ctx, s, url, *iterations)
			fmt.Printf("round %d, %s: %s\n", r+1, s.name, res)
			results[s] = append(results[s], res)
		}
	}
	fmt.Printf("\n%d rounds; in each, %d navigations + snapshots and %d screenshots per side; load average %s\n\n",
		*rounds, *iterations, *iterations, harness.LoadAverage())
	if len(sides) > 0 {
		printTable(sides, results)
	}

	fmt.Printf("\n## A2UI push to render (load average %s)\n\n", harness.LoadAverage())
	fmt.Println("Playwright MCP has no canvas and no A2UI renderer: Toolbelt's figures stand alone.")
	cv := canvasServer(tbi)
	if why := cv.lacks(ctx, "canvas"); why != "" {
		fmt.Printf("\nToolbelt not measured: %s\n", why)
	} else {
		printPushes(measureA2UI(ctx, cv, *chromium, tmp, *rounds, *iterations), *rounds, *iterations)
	}
	fmt.Printf("\nload average %s at the end\n", harness.LoadAverage())
}

// installPlaywright runs npm ci in bench/browser unless the pinned
// Playwright MCP is installed there.
func installPlaywright() {
	if playwrightVersion() == pinned() {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--silent")
	cmd.Dir = "bench/browser"
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	harness.Check(cmd.Run())
}

// version is the first line a program prints when asked its version.
func version(prog string, args ...string) string {
	out, err := exec.Command(prog, args...).Output()
	harness.Check(err)
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first
}

// playwrightVersion is the version of the Playwright MCP installed in
// bench/browser/node_modules, or "" when there is none.
func playwrightVersion() string {
	var p struct{ Version string }
	b, err := os.ReadFile(filepath.Join(modules, "@playwright/mcp/package.json"))
	if err != nil || json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}

// pinned is the Playwright MCP version bench/browser/package.json pins.
func pinned() string {
	var p struct{ Dependencies map[string]string }
	b, err := os.ReadFile("bench/browser/package.json")
	harness.Check(err)
	harness.Check(json.Unmarshal(b, &p))
	return p.Dependencies["@playwright/mcp"]
}
