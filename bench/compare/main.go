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
//   - RSS of an idle server after its first tools/list, and RSS per open
//     HTTP session.
//
// Run it from the repository root; it builds what it runs:
//
//	go run ./bench/compare [-starts 20] [-calls 2000] [-seconds 2] [-sessions 100] [-toolbelt BIN] [-cold]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
	check(err)
	defer os.RemoveAll(tmp)
	bin := func(name, pkg string) string {
		out := filepath.Join(tmp, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		check(cmd.Run())
		return out
	}
	floor := bin("floor", "./bench/floor")
	many := bin("manytools", "./bench/manytools")
	tb := *tbBin
	if tb == "" {
		tb = bin("toolbelt", "./cmd/toolbelt")
	}
	var dirs []string
	for _, d := range []string{"testdata/mcp-tools", "schema/testdata/corpus"} {
		abs, err := filepath.Abs(d)
		check(err)
		dirs = append(dirs, abs)
	}
	corpus := strings.Join(dirs, ",")
	ws := filepath.Join(tmp, "workspace")
	check(os.MkdirAll(ws, 0o755))
	line := strings.Repeat("x", 63) + "\n"
	check(os.WriteFile(filepath.Join(ws, "file.txt"), []byte(strings.Repeat(line, 64)), 0o644))
	plain := filepath.Join(tmp, "plain.yaml")
	check(os.WriteFile(plain, []byte("{}\n"), 0o644))
	importing := filepath.Join(tmp, "import.yaml")
	check(os.WriteFile(importing, fmt.Appendf(nil, "mcpServers:\n  many:\n    command: %q\n    args: [\"-corpus\", %q, \"-n\", \"%d\"]\n", many, corpus, *imported), 0o644))
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
	var rssTB, rssFloor []float64
	for range *starts {
		d, rss, cpu := coldStart(tbCmd())
		coldTB, rssTB, cpuTB = append(coldTB, d), append(rssTB, rss), append(cpuTB, cpu)
		d, rss, cpu = coldStart(floorCmd())
		coldFloor, rssFloor, cpuFloor = append(coldFloor, d), append(rssFloor, rss), append(cpuFloor, cpu)
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
	tbS, flS := start(tbCmd()), start(floorCmd())
	var latTB, latFloor []time.Duration
	for i := 0; i < *calls; i += 200 {
		latTB = append(latTB, tbS.reads(200)...)
		latFloor = append(latFloor, flS.reads(200)...)
	}
	tbS.close()
	flS.close()
	ratio("stdio read 4 KB p50 (raw client)", ms(q(latTB, .5)), ms(q(latFloor, .5))+" floor", sec(q(latTB, .5))/sec(q(latFloor, .5)))
	ratio("stdio read 4 KB p99 (raw client)", ms(q(latTB, .99)), ms(q(latFloor, .99))+" floor", sec(q(latTB, .99))/sec(q(latFloor, .99)))
	ratio("idle RSS after the first tools/list", mb(median(rssTB)), mb(median(rssFloor))+" floor", median(rssTB)/median(rssFloor))

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

// session is a server on stdio driven by raw JSON-RPC lines.
type session struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func start(cmd *exec.Cmd) *session {
	s, err := launch(cmd)
	check(err)
	s.handshake()
	return s
}

func launch(cmd *exec.Cmd) (*session, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &session{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (s *session) send(line string) {
	_, err := io.WriteString(s.in, line+"\n")
	check(err)
}

// answer reads lines until the answer to request id (notifications and
// requests from the server are skipped).
func (s *session) answer(id int) string {
	want := fmt.Sprintf(`"id":%d,`, id)
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			log.Fatalf("%s: %v", s.cmd.Path, err)
		}
		if strings.Contains(line, want) && (strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`)) {
			return line
		}
	}
}

func (s *session) request(method, params string) string {
	s.id++
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, params))
	return s.answer(s.id)
}

func (s *session) handshake() {
	s.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"compare","version":"1"}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (s *session) reads(n int) []time.Duration {
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		line := s.request("tools/call", `{"name":"read","arguments":{"path":"file.txt"}}`)
		lat[i] = time.Since(t0)
		if !strings.Contains(line, `"result"`) || strings.Contains(line, `"isError":true`) {
			log.Fatalf("read failed: %s", line)
		}
	}
	return lat
}

func (s *session) close() {
	s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// coldStart execs cmd and times it to the answer of tools/list; it returns
// that time, the server's RSS half a second later, and the CPU time the
// server had used by then (user and system; its own children not counted).
func coldStart(cmd *exec.Cmd) (time.Duration, float64, time.Duration) {
	t0 := time.Now()
	s, err := launch(cmd)
	check(err)
	s.handshake()
	if line := s.request("tools/list", `{}`); !strings.Contains(line, `"tools"`) {
		log.Fatalf("tools/list: %s", line)
	}
	d := time.Since(t0)
	time.Sleep(500 * time.Millisecond)
	rss := rssOf(s.cmd.Process.Pid)
	cpu := cpuOf(s.cmd.Process.Pid)
	s.close()
	return d, rss, cpu
}

// cpuOf is the CPU time a running process has used, from /proc.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

func serveHTTP(cmd *exec.Cmd, env []string) (string, *exec.Cmd) {
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	sc := bufio.NewScanner(out)
	re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1], cmd
		}
	}
	log.Fatalf("%s printed no URL", cmd.Path)
	return "", nil
}

// callRate is read calls per second with one Go SDK client, sequential.
func callRate(url string) float64 {
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "compare", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	check(err)
	defer cs.Close()
	args := map[string]any{"path": "file.txt"}
	for range 50 {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		check(err)
	}
	n, t0 := 0, time.Now()
	for time.Since(t0).Seconds() < *seconds {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		check(err)
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
	before := rssOf(pid)
	var open []*sdk.ClientSession
	for range *sessions {
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		check(err)
		_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "file.txt"}})
		check(err)
		open = append(open, cs)
	}
	time.Sleep(300 * time.Millisecond)
	after := rssOf(pid)
	for _, cs := range open {
		cs.Close()
	}
	return (after - before) / float64(*sessions)
}

// rssOf is a process's resident set in bytes.
func rssOf(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
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

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
