// Command compare runs Toolbelt and the floor (bench/floor: a minimal
// server on the same MCP Go SDK with one read tool) interleaved, with the
// same clients, and prints each figure with the ratio Toolbelt ÷ floor:
//
//   - cold start: exec to the answer of the first tools/list (raw JSON-RPC
//     lines on stdio);
//   - cold start with 1,000 imported tools (bench/manytools) against that
//     server started alone;
//   - read of a 4 KB file over stdio, raw client: p50 and p99;
//   - calls per second over streamable HTTP with one Go SDK client;
//   - RSS of an idle server (and its anonymous part: what the binary's
//     shared pages are not) after its first tools/list, and after the
//     stdio reads and five seconds' rest; RSS per open HTTP session.
//
// Run it from the repository root; it builds what it runs:
//
//	go run ./bench/compare [-starts 20] [-calls 2000] [-seconds 2] [-sessions 100] [-toolbelt BIN] [-cold]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

var (
	starts   = flag.Int("starts", 20, "cold starts per server")
	calls    = flag.Int("calls", 2000, "stdio reads per server")
	seconds  = flag.Float64("seconds", 2, "seconds of HTTP calls per round (3 rounds each)")
	sessions = flag.Int("sessions", 100, "HTTP sessions opened to measure memory per session")
	tbBin    = flag.String("toolbelt", "", "a toolbelt binary to measure instead of building ./cmd/toolbelt")
	imported = flag.Int("imported", 1000, "tools of the imported server")
	coldOnly = flag.Bool("cold", false, "measure only the cold starts")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	tmp, err := os.MkdirTemp("", "toolbelt-compare")
	harness.Check(err)
	defer os.RemoveAll(tmp)
	bin := func(name, pkg string) string { return harness.Build(tmp, name, pkg) }
	floor := bin("floor", "./bench/floor")
	many := bin("manytools", "./bench/manytools")
	tb := *tbBin
	if tb == "" {
		tb = bin("toolbelt", "./cmd/toolbelt")
	}
	var dirs []string
	for _, d := range []string{"testdata/mcp-tools", "schema/testdata/corpus"} {
		abs, err := filepath.Abs(d)
		harness.Check(err)
		dirs = append(dirs, abs)
	}
	corpus := strings.Join(dirs, ",")
	ws, plain := harness.Workspace(tmp)
	importing := filepath.Join(tmp, "import.yaml")
	harness.Check(os.WriteFile(importing, fmt.Appendf(nil, "mcpServers:\n  many:\n    command: %q\n    args: [\"-corpus\", %q, \"-n\", \"%d\"]\n", many, corpus, *imported), 0o644))
	env := func(config string) []string {
		return append(os.Environ(), "TOOLBELT_CONFIG="+config, "TOOLBELT_DATA="+filepath.Join(tmp, "data"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	}
	floorCmd := func() *exec.Cmd { return exec.Command(floor, "-dir", ws) }
	tbCmd := func() *exec.Cmd {
		c := exec.Command(tb, "mcp", "--workspace", ws)
		c.Env = env(plain)
		return c
	}
	manyCmd := func() *exec.Cmd { return exec.Command(many, "-corpus", corpus, "-n", strconv.Itoa(*imported)) }
	tbImportCmd := func() *exec.Cmd {
		c := exec.Command(tb, "mcp", "--workspace", ws)
		c.Env = env(importing)
		return c
	}

	fmt.Printf("%s, %d CPUs, %s; medians of interleaved runs\n\n", cpuModel(), runtime.NumCPU(), runtime.Version())
	fmt.Println("| figure | Toolbelt | peer | Toolbelt ÷ peer |")
	fmt.Println("| --- | --- | --- | --- |")

	// Cold starts, interleaved.
	var coldTB, coldFloor, coldImport, coldMany []time.Duration
	var cpuTB, cpuFloor, cpuImport, cpuMany []time.Duration
	var memTB, memFloor []memory
	for range *starts {
		d, mem, cpu := coldStart(tbCmd())
		coldTB, memTB, cpuTB = append(coldTB, d), append(memTB, mem), append(cpuTB, cpu)
		d, mem, cpu = coldStart(floorCmd())
		coldFloor, memFloor, cpuFloor = append(coldFloor, d), append(memFloor, mem), append(cpuFloor, cpu)
	}
	for range max(*starts/4, 3) {
		d, _, cpu := coldStart(tbImportCmd())
		coldImport, cpuImport = append(coldImport, d), append(cpuImport, cpu)
		d, _, cpu = coldStart(manyCmd())
		coldMany, cpuMany = append(coldMany, d), append(cpuMany, cpu)
	}
	ratio("cold start → first tools/list (raw client)", ms(q(coldTB, .5)), ms(q(coldFloor, .5))+" floor", sec(q(coldTB, .5))/sec(q(coldFloor, .5)))
	cpuRatio("CPU time of that start (to 0.5 s after)", q(cpuTB, .5), q(cpuFloor, .5), " floor")
	ratio(fmt.Sprintf("cold start with %d imported tools", *imported), ms(q(coldImport, .5)), ms(q(coldMany, .5))+" the imported server alone", sec(q(coldImport, .5))/sec(q(coldMany, .5)))
	cpuRatio("CPU time of that start (to 0.5 s after; Toolbelt's own)", q(cpuImport, .5), q(cpuMany, .5), " the imported server alone")
	if *coldOnly {
		return
	}

	// stdio reads, raw client, both servers up, alternating blocks.
	tbS, flS := harness.Start(tbCmd(), "compare"), harness.Start(floorCmd(), "compare")
	var latTB, latFloor []time.Duration
	for i := 0; i < *calls; i += 200 {
		latTB = append(latTB, reads(tbS, 200)...)
		latFloor = append(latFloor, reads(flS, 200)...)
	}
	time.Sleep(restFor)
	restTB, restFloor := memoryOf(tbS.Cmd.Process.Pid), memoryOf(flS.Cmd.Process.Pid)
	tbS.Close()
	flS.Close()
	ratio("stdio read 4 KB p50 (raw client)", ms(q(latTB, .5)), ms(q(latFloor, .5))+" floor", sec(q(latTB, .5))/sec(q(latFloor, .5)))
	ratio("stdio read 4 KB p99 (raw client)", ms(q(latTB, .99)), ms(q(latFloor, .99))+" floor", sec(q(latTB, .99))/sec(q(latFloor, .99)))
	rssTB, rssFloor := median(rssOf(memTB)), median(rssOf(memFloor))
	anonTB, anonFloor := median(anonOf(memTB)), median(anonOf(memFloor))
	ratio("idle RSS after the first tools/list", mb(rssTB), mb(rssFloor)+" floor", rssTB/rssFloor)
	ratio("its anonymous part", mb(anonTB), mb(anonFloor)+" floor", anonTB/anonFloor)
	ratio(fmt.Sprintf("idle RSS after the %d reads and %s' rest", *calls, restFor), mb(restTB.rss), mb(restFloor.rss)+" floor", restTB.rss/restFloor.rss)
	ratio("its anonymous part", mb(restTB.anon), mb(restFloor.anon)+" floor", restTB.anon/restFloor.anon)

	// HTTP.
	tbURL, tbProc := serveHTTP(exec.Command(tb, "serve", "--addr", "127.0.0.1:0", "--workspace", ws), env(plain))
	defer tbProc.Process.Kill()
	flURL, flProc := serveHTTP(exec.Command(floor, "-dir", ws, "-http", "127.0.0.1:0"), nil)
	defer flProc.Process.Kill()
	var rateTB, rateFloor []float64
	for range 3 {
		rateTB = append(rateTB, callRate(tbURL))
		rateFloor = append(rateFloor, callRate(flURL))
	}
	ratio("HTTP calls/s, 1 client (Go SDK)", fmt.Sprintf("%.0f", median(rateTB)), fmt.Sprintf("%.0f floor", median(rateFloor)), median(rateTB)/median(rateFloor))
	sessTB, sessFloor := perSession(tbURL, tbProc.Process.Pid), perSession(flURL, flProc.Process.Pid)
	ratio("RSS per open HTTP session", kb(sessTB), kb(sessFloor)+" floor", sessTB/sessFloor)
}

// reads makes n sequential read calls of file.txt and returns their
// latencies.
func reads(s *harness.Stdio, n int) []time.Duration {
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		line := s.Request("tools/call", `{"name":"read","arguments":{"path":"file.txt"}}`)
		lat[i] = time.Since(t0)
		if !strings.Contains(line, `"result"`) || strings.Contains(line, `"isError":true`) {
			log.Fatalf("read failed: %s", line)
		}
	}
	return lat
}

// restFor is how long a server rests after the stdio reads before its
// memory is measured: longer than Toolbelt takes to notice it is idle.
const restFor = 5 * time.Second

// coldStart execs cmd and times it to the answer of tools/list; it returns
// that time, the server's memory half a second later, and the CPU time the
// server had used by then (user and system; its own children not counted).
func coldStart(cmd *exec.Cmd) (time.Duration, memory, time.Duration) {
	t0 := time.Now()
	s := harness.Start(cmd, "compare")
	if line := s.Request("tools/list", `{}`); !strings.Contains(line, `"tools"`) {
		log.Fatalf("tools/list: %s", line)
	}
	d := time.Since(t0)
	time.Sleep(500 * time.Millisecond)
	mem := memoryOf(s.Cmd.Process.Pid)
	cpu := harness.CPU(s.Cmd.Process.Pid)
	s.Close()
	return d, mem, cpu
}

func serveHTTP(cmd *exec.Cmd, env []string) (string, *exec.Cmd) {
	if env != nil {
		cmd.Env = env
	}
	return harness.Serve(cmd), cmd
}

// callRate is read calls per second with one Go SDK client, sequential.
func callRate(url string) float64 {
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "compare", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	harness.Check(err)
	defer cs.Close()
	args := map[string]any{"path": "file.txt"}
	for range 50 {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		harness.Check(err)
	}
	n, t0 := 0, time.Now()
	for time.Since(t0).Seconds() < *seconds {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		harness.Check(err)
		if res.IsError {
			log.Fatalf("read failed over HTTP: %+v", res.Content)
		}
		n++
	}
	return float64(n) / time.Since(t0).Seconds()
}

// perSession opens sessions, each initialized and with one call made, and
// returns the server's RSS growth per session.
func perSession(url string, pid int) float64 {
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "compare", Version: "1"}, nil)
	before := memoryOf(pid).rss
	var open []*sdk.ClientSession
	for range *sessions {
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		harness.Check(err)
		_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "file.txt"}})
		harness.Check(err)
		open = append(open, cs)
	}
	time.Sleep(300 * time.Millisecond)
	after := memoryOf(pid).rss
	for _, cs := range open {
		cs.Close()
	}
	return (after - before) / float64(*sessions)
}

// memory is a process's resident set and its anonymous part, in bytes.
type memory struct{ rss, anon float64 }

// memoryOf reads a process's memory from /proc.
func memoryOf(pid int) memory {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}
	}
	var m memory
	for l := range strings.SplitSeq(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "VmRSS":
			m.rss = kb * 1024
		case "RssAnon":
			m.anon = kb * 1024
		}
	}
	return m
}

func rssOf(ms []memory) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = m.rss
	}
	return out
}

func anonOf(ms []memory) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = m.anon
	}
	return out
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

func q(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func sec(d time.Duration) float64 { return d.Seconds() }
func ms(d time.Duration) string   { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }
func mb(b float64) string         { return fmt.Sprintf("%.1f MB", b/1e6) }
func kb(b float64) string         { return fmt.Sprintf("%.0f KB", b/1e3) }

func ratio(name, a, b string, r float64) {
	fmt.Printf("| %s | %s | %s | %.2f× |\n", name, a, b, r)
}

// cpuRatio prints a row of CPU times, which /proc counts in 10 ms ticks:
// a peer below one tick has no ratio.
func cpuRatio(name string, a, b time.Duration, peer string) {
	if b == 0 {
		fmt.Printf("| %s | %s | under 10 ms%s | — |\n", name, ms(a), peer)
		return
	}
	ratio(name, ms(a), ms(b)+peer, sec(a)/sec(b))
}
