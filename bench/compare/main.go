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
//   - the idle server's own memory — its anonymous pages (RssAnon), what
//     the binary's shared, file-backed pages are not — with its PSS beside
//     it, after its first tools/list and after the stdio reads and five
//     seconds' rest; the anonymous memory per open HTTP session; and the
//     binary's size, which is what the mapped code costs.
//
// Several Toolbelt builds can be measured side by side in one run
// (-toolbelt A,B,…: each named by its file name), each interleaved with
// the others and the floor, in an order that rotates from round to
// round, so that their ratios compare.
//
// Run it from the repository root; it builds what it runs:
//
//	go run ./bench/compare [-starts 20] [-calls 2000] [-seconds 2] [-sessions 100] [-toolbelt BIN[,BIN…]] [-cold]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
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
	tbBins   = flag.String("toolbelt", "", "toolbelt binaries to measure side by side, comma-separated, instead of building ./cmd/toolbelt")
	imported = flag.Int("imported", 1000, "tools of the imported server")
	coldOnly = flag.Bool("cold", false, "measure only the cold starts (and the idle memory after them)")
)

// build is one Toolbelt binary measured.
type build struct{ name, bin string }

func main() {
	flag.Parse()
	log.SetFlags(0)
	tmp, err := os.MkdirTemp("", "toolbelt-compare")
	harness.Check(err)
	defer os.RemoveAll(tmp)
	bin := func(name, pkg string) string { return harness.Build(tmp, name, pkg) }
	floor := bin("floor", "./bench/floor")
	many := bin("manytools", "./bench/manytools")
	builds := []build{{"Toolbelt", ""}}
	if *tbBins == "" {
		builds[0].bin = bin("toolbelt", "./cmd/toolbelt")
	} else {
		builds = nil
		for b := range strings.SplitSeq(*tbBins, ",") {
			builds = append(builds, build{filepath.Base(b), b})
		}
	}
	corpus := harness.AbsCorpusDirs()
	ws, plain := harness.Workspace(tmp)
	importing := filepath.Join(tmp, "import.yaml")
	harness.Check(os.WriteFile(importing, fmt.Appendf(nil, "mcpServers:\n  many:\n    command: %q\n    args: [\"-corpus\", %q, \"-n\", \"%d\"]\n", many, corpus, *imported), 0o644))
	env := func(config string) []string { return harness.Env(tmp, config) }
	floorCmd := func() *exec.Cmd { return exec.Command(floor, "-dir", ws) }
	tbCmd := func(b build, config string) *exec.Cmd {
		c := exec.Command(b.bin, "mcp", "--workspace", ws)
		c.Env = env(config)
		return c
	}
	manyCmd := func() *exec.Cmd { return exec.Command(many, "-corpus", corpus, "-n", strconv.Itoa(*imported)) }

	fmt.Printf("%s; medians of interleaved runs; load average %s\n\n", harness.Machine(), harness.LoadAverage())
	t := &table{builds: builds}
	t.header()

	// Cold starts, interleaved.
	n := len(builds)
	coldTB, cpuTB, memTB := make([][]time.Duration, n), make([][]time.Duration, n), make([][]memory, n)
	coldImport, cpuImport := make([][]time.Duration, n), make([][]time.Duration, n)
	var coldFloor, coldMany, cpuFloor, cpuMany []time.Duration
	var memFloor []memory
	for r := range *starts {
		for _, i := range rotation(n+1, r) {
			if i == n {
				d, mem, cpu := coldStart(floorCmd())
				coldFloor, memFloor, cpuFloor = append(coldFloor, d), append(memFloor, mem), append(cpuFloor, cpu)
				continue
			}
			d, mem, cpu := coldStart(tbCmd(builds[i], plain))
			coldTB[i], memTB[i], cpuTB[i] = append(coldTB[i], d), append(memTB[i], mem), append(cpuTB[i], cpu)
		}
	}
	for r := range max(*starts/4, 3) {
		for _, i := range rotation(n+1, r) {
			if i == n {
				d, _, cpu := coldStart(manyCmd())
				coldMany, cpuMany = append(coldMany, d), append(cpuMany, cpu)
				continue
			}
			d, _, cpu := coldStart(tbCmd(builds[i], importing))
			coldImport[i], cpuImport[i] = append(coldImport[i], d), append(cpuImport[i], cpu)
		}
	}
	t.times("cold start → first tools/list (raw client)", coldTB, coldFloor, .5, "floor")
	t.times("CPU time of that start (to 0.5 s after; 10 ms ticks)", cpuTB, cpuFloor, .5, "floor")
	t.times(fmt.Sprintf("cold start with %d imported tools", *imported), coldImport, coldMany, .5, "the imported server alone")
	t.times("CPU time of that start (Toolbelt's own)", cpuImport, cpuMany, .5, "the imported server alone")
	t.memory("idle anonymous memory after the first tools/list (RssAnon)", memTB, memFloor, memory.anonymous)
	t.memory("its PSS", memTB, memFloor, memory.proportional)
	if *coldOnly {
		return
	}

	// stdio reads, raw client, every server up, alternating blocks.
	tbS := make([]*harness.Stdio, n)
	for i, b := range builds {
		tbS[i] = harness.Start(tbCmd(b, plain), "compare")
	}
	flS := harness.Start(floorCmd(), "compare")
	latTB := make([][]time.Duration, n)
	var latFloor []time.Duration
	for j := 0; j < *calls; j += 200 {
		for _, i := range rotation(n+1, j/200) {
			if i == n {
				latFloor = append(latFloor, reads(flS, 200)...)
				continue
			}
			latTB[i] = append(latTB[i], reads(tbS[i], 200)...)
		}
	}
	time.Sleep(restFor)
	restTB := make([][]memory, n)
	for i, s := range tbS {
		restTB[i] = []memory{memoryOf(s.Cmd.Process.Pid)}
		s.Close()
	}
	restFloor := []memory{memoryOf(flS.Cmd.Process.Pid)}
	flS.Close()
	t.times("stdio read 4 KB p50 (raw client)", latTB, latFloor, .5, "floor")
	t.times("stdio read 4 KB p99 (raw client)", latTB, latFloor, .99, "floor")
	t.memory(fmt.Sprintf("idle anonymous memory after the %d reads and %s' rest", *calls, restFor), restTB, restFloor, memory.anonymous)
	t.memory("its PSS", restTB, restFloor, memory.proportional)
	sizes := make([][]float64, n)
	for i, b := range builds {
		sizes[i] = []float64{fileSize(b.bin)}
	}
	t.values("binary size (mapped, shared by every process of it)", sizes, []float64{fileSize(floor)}, mb, "floor")

	// HTTP.
	urls, pids := make([]string, n), make([]int, n)
	for i, b := range builds {
		url, proc := serveHTTP(exec.Command(b.bin, "serve", "--addr", "127.0.0.1:0", "--workspace", ws), env(plain))
		defer proc.Process.Kill()
		urls[i], pids[i] = url, proc.Process.Pid
	}
	flURL, flProc := serveHTTP(exec.Command(floor, "-dir", ws, "-http", "127.0.0.1:0"), nil)
	defer flProc.Process.Kill()
	rateTB := make([][]float64, n)
	var rateFloor []float64
	for r := range 3 {
		for _, i := range rotation(n+1, r) {
			if i == n {
				rateFloor = append(rateFloor, callRate(flURL))
				continue
			}
			rateTB[i] = append(rateTB[i], callRate(urls[i]))
		}
	}
	t.values("HTTP calls/s, 1 client (Go SDK)", rateTB, rateFloor, func(x float64) string { return fmt.Sprintf("%.0f", x) }, "floor")
	sessTB := make([][]float64, n)
	for i, url := range urls {
		sessTB[i] = []float64{perSession(url, pids[i])}
	}
	t.values("anonymous memory per open HTTP session", sessTB, []float64{perSession(flURL, flProc.Process.Pid)}, kb, "floor")
}

// rotation is the order of n sides in round r: each round starts one
// further along, so that no side always follows the same other (a start
// right after another process's exit runs slower: its exit's work is
// still going on).
func rotation(n, r int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (r + k) % n
	}
	return order
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
// returns the growth of the server's anonymous memory per session.
func perSession(url string, pid int) float64 {
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "compare", Version: "1"}, nil)
	before := memoryOf(pid).anon
	var open []*sdk.ClientSession
	for range *sessions {
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		harness.Check(err)
		_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "file.txt"}})
		harness.Check(err)
		open = append(open, cs)
	}
	time.Sleep(300 * time.Millisecond)
	after := memoryOf(pid).anon
	for _, cs := range open {
		cs.Close()
	}
	return (after - before) / float64(*sessions)
}

// memory is a process's own memory, in bytes: its anonymous resident
// pages (RssAnon), and its proportional set size (PSS: its resident pages,
// each shared one divided among the processes that map it).
type memory struct{ anon, pss float64 }

func (m memory) anonymous() float64    { return m.anon }
func (m memory) proportional() float64 { return m.pss }

// memoryOf reads a process's memory from /proc: RssAnon from status, Pss
// from smaps_rollup.
func memoryOf(pid int) memory {
	return memory{
		anon: procField(fmt.Sprintf("/proc/%d/status", pid), "RssAnon"),
		pss:  procField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss"),
	}
}

// procField returns the field key of a /proc file of "key: N kB" lines, in
// bytes; 0 when the file or the field is missing.
func procField(path, key string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		if k == key {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

func fileSize(path string) float64 {
	fi, err := os.Stat(path)
	harness.Check(err)
	return float64(fi.Size())
}

func mb(b float64) string { return fmt.Sprintf("%.1f MB", b/1e6) }
func kb(b float64) string { return fmt.Sprintf("%.0f KB", b/1e3) }

// table prints one row per figure: the peer's value, then each build's
// with its ratio to the peer.
type table struct{ builds []build }

func (t *table) header() {
	fmt.Print("| figure | peer |")
	for _, b := range t.builds {
		fmt.Printf(" %s |", b.name)
	}
	fmt.Print("\n| --- | --- |")
	for range t.builds {
		fmt.Print(" --- |")
	}
	fmt.Println()
}

// values prints a row of each build's median of xs beside the peer's
// median, shown by format.
func (t *table) values(name string, xs [][]float64, peer []float64, format func(float64) string, peerName string) {
	p := harness.Median(peer)
	fmt.Printf("| %s | %s %s |", name, format(p), peerName)
	for _, x := range xs {
		v := harness.Median(x)
		if p == 0 {
			fmt.Printf(" %s |", format(v))
			continue
		}
		fmt.Printf(" %s (%.2f×) |", format(v), v/p)
	}
	fmt.Println()
}

// times prints a row of each build's quantile p of ds beside the peer's.
func (t *table) times(name string, ds [][]time.Duration, peer []time.Duration, p float64, peerName string) {
	ms := func(d float64) string { return fmt.Sprintf("%.3f ms", d/1e6) }
	xs := make([][]float64, len(ds))
	for i, d := range ds {
		xs[i] = []float64{float64(harness.Quantile(d, p))}
	}
	t.values(name, xs, []float64{float64(harness.Quantile(peer, p))}, ms, peerName)
}

// memory prints a row of each build's median of one figure of ms.
func (t *table) memory(name string, ms [][]memory, peer []memory, figure func(memory) float64) {
	of := func(l []memory) []float64 {
		out := make([]float64, len(l))
		for i, m := range l {
			out[i] = figure(m)
		}
		return out
	}
	xs := make([][]float64, len(ms))
	for i, l := range ms {
		xs[i] = of(l)
	}
	t.values(name, xs, of(peer), mb, "floor")
}
