// Command callcpu measures the CPU time a server spends on one call: N
// sequential `read` calls of a 4 KB file, over stdio (raw JSON-RPC lines)
// and over streamable HTTP (one Go SDK client), and the user + system time
// the server process used for them (from /proc, so the client's own work is
// not counted), divided by N; and, beside it, the calls per second. The floor (bench/floor) and each Toolbelt
// binary given are measured in turn, round after round, so that every
// figure has its peers measured in the same minutes.
//
// CPU time moves far less than wall time when other jobs share the
// machine, which is why the call path's changes are judged by it.
//
//	go run ./bench/callcpu [-calls 3000] [-rounds 3] [-toolbelt BIN[,BIN2]] [-floor BIN] [-http=false] [-stdio=false]
//
// With -prof PREFIX, each server of the first round is started with
// TOOLBELT_PROF set to PREFIX-<i>-<transport> (PREFIX-floor-<transport> for
// the floor) and sent SIGUSR1 after its calls: a binary with a profiling
// hook that reads them writes its profiles there (no hook is in the
// repository; without one the variable does nothing).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

var (
	calls    = flag.Int("calls", 3000, "calls per server and transport in a round")
	rounds   = flag.Int("rounds", 3, "rounds")
	tbBins   = flag.String("toolbelt", "", "toolbelt binaries to measure, comma-separated (default: build ./cmd/toolbelt)")
	doHTTP   = flag.Bool("http", true, "measure streamable HTTP too")
	doIO     = flag.Bool("stdio", true, "measure stdio")
	prof     = flag.String("prof", "", "profile prefix handed to the servers (TOOLBELT_PROF)")
	floorBin = flag.String("floor", "", "a floor binary to measure instead of building ./bench/floor")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	tmp, err := os.MkdirTemp("", "toolbelt-callcpu")
	harness.Check(err)
	defer os.RemoveAll(tmp)
	build := func(name, pkg string) string { return harness.Build(tmp, name, pkg) }
	floor := *floorBin
	if floor == "" {
		floor = build("floor", "./bench/floor")
	}
	var tbs []string
	if *tbBins == "" {
		tbs = []string{build("toolbelt", "./cmd/toolbelt")}
	} else {
		tbs = strings.Split(*tbBins, ",")
	}
	ws, plain := harness.Workspace(tmp)

	type server struct {
		name  string
		stdio func() *exec.Cmd
		http  func() *exec.Cmd
		prof  string
	}
	floorEnv := func(transport string) []string {
		if *prof == "" {
			return nil
		}
		return append(os.Environ(), "TOOLBELT_PROF="+*prof+"-floor-"+transport)
	}
	servers := []server{{
		name: "floor",
		prof: *prof,
		stdio: func() *exec.Cmd {
			c := exec.Command(floor, "-dir", ws)
			c.Env = floorEnv("stdio")
			return c
		},
		http: func() *exec.Cmd {
			c := exec.Command(floor, "-dir", ws, "-http", "127.0.0.1:0")
			c.Env = floorEnv("http")
			return c
		},
	}}
	for i, tb := range tbs {
		state := filepath.Join(tmp, fmt.Sprintf("toolbelt%d", i))
		p := ""
		if *prof != "" {
			p = fmt.Sprintf("%s-%d", *prof, i)
		}
		env := func(transport string) []string {
			e := harness.Env(state, plain)
			if p != "" {
				e = append(e, "TOOLBELT_PROF="+p+"-"+transport)
			}
			return e
		}
		servers = append(servers, server{
			name: fmt.Sprintf("toolbelt %s", tb),
			prof: p,
			stdio: func() *exec.Cmd {
				c := exec.Command(tb, "mcp", "--workspace", ws)
				c.Env = env("stdio")
				return c
			},
			http: func() *exec.Cmd {
				c := exec.Command(tb, "serve", "--addr", "127.0.0.1:0", "--workspace", ws)
				c.Env = env("http")
				return c
			},
		})
	}

	cpu, rate := map[string][]float64{}, map[string][]float64{}
	add := func(key string, c, r float64) {
		cpu[key], rate[key] = append(cpu[key], c), append(rate[key], r)
	}
	for r := range *rounds {
		for _, s := range servers {
			profile := s.prof != "" && r == 0
			if *doIO {
				c, rt := stdioCPU(unprofiled(s.stdio(), profile), profile)
				add(s.name+" stdio", c, rt)
			}
			if *doHTTP {
				c, rt := httpCPU(unprofiled(s.http(), profile), profile)
				add(s.name+" http", c, rt)
			}
		}
	}
	fmt.Printf("read calls of 4 KB, %d calls, %d rounds (each round's figure, then the median)\n\n", *calls, *rounds)
	fmt.Println("| server | transport | server CPU µs per call | calls per second (wall) |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, s := range servers {
		for _, t := range []string{"stdio", "http"} {
			key := s.name + " " + t
			if len(cpu[key]) == 0 {
				continue
			}
			fmt.Printf("| %s | %s | %s | %s |\n", s.name, t, series(cpu[key]), series(rate[key]))
		}
	}
}

// series writes each round's figure and their median.
func series(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%.0f", x))
	}
	sorted := slices.Sorted(slices.Values(xs))
	return fmt.Sprintf("%s (median %.0f)", strings.Join(parts, ", "), sorted[len(sorted)/2])
}

// stdioCPU starts a server on stdio, warms it up, and returns the CPU µs it
// used per call over the measured calls.
func stdioCPU(cmd *exec.Cmd, profile bool) (float64, float64) {
	s := harness.Start(cmd, "callcpu")
	read := func() {
		line := s.Request("tools/call", `{"name":"read","arguments":{"path":"file.txt"}}`)
		if !strings.Contains(line, `"result"`) || strings.Contains(line, `"isError":true`) {
			log.Fatalf("read failed: %s", line)
		}
	}
	perCall, rate := measure(cmd, read, profile)
	s.Close()
	return perCall, rate
}

// httpCPU serves streamable HTTP, calls it from one Go SDK client session,
// and returns the server's CPU µs per call.
func httpCPU(cmd *exec.Cmd, profile bool) (float64, float64) {
	url := harness.Serve(cmd)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "callcpu", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	harness.Check(err)
	defer cs.Close()
	args := map[string]any{"path": "file.txt"}
	read := func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		harness.Check(err)
		if res.IsError {
			log.Fatalf("read failed over HTTP: %+v", res.Content)
		}
	}
	return measure(cmd, read, profile)
}

// measure makes 300 warm-up calls with read, then *calls measured ones, and
// returns the server's CPU time per measured call in microseconds (the
// audit drain's last batch included) and the calls per second; with
// profile, it then asks the server to write its profiles.
func measure(cmd *exec.Cmd, read func(), profile bool) (perCall, rate float64) {
	for range 300 {
		read()
	}
	time.Sleep(300 * time.Millisecond)
	c0, t0 := harness.CPU(cmd.Process.Pid), time.Now()
	for range *calls {
		read()
	}
	rate = float64(*calls) / time.Since(t0).Seconds()
	time.Sleep(300 * time.Millisecond) // the audit drain's last batch
	c1 := harness.CPU(cmd.Process.Pid)
	if profile {
		stopProfile(cmd)
	}
	return float64(c1-c0) / float64(time.Microsecond) / float64(*calls), rate
}

// unprofiled drops TOOLBELT_PROF from the environment of a server that is
// not profiled (only the first round's are).
func unprofiled(cmd *exec.Cmd, profile bool) *exec.Cmd {
	if !profile {
		cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "TOOLBELT_PROF=") })
	}
	return cmd
}

// stopProfile asks a server with a profiling hook to write its profiles and
// waits for it to say it has.
func stopProfile(cmd *exec.Cmd) {
	var p string
	for _, e := range cmd.Env {
		if v, ok := strings.CutPrefix(e, "TOOLBELT_PROF="); ok {
			p = v
		}
	}
	_ = cmd.Process.Signal(syscall.SIGUSR1)
	for range 100 {
		if _, err := os.Stat(p + ".done"); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Printf("%s wrote no profile", cmd.Path)
}
