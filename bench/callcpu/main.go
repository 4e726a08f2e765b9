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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
	check(err)
	defer os.RemoveAll(tmp)
	build := func(name, pkg string) string {
		out := filepath.Join(tmp, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		check(cmd.Run())
		return out
	}
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
	ws := filepath.Join(tmp, "workspace")
	check(os.MkdirAll(ws, 0o755))
	line := strings.Repeat("x", 63) + "\n"
	check(os.WriteFile(filepath.Join(ws, "file.txt"), []byte(strings.Repeat(line, 64)), 0o644))
	plain := filepath.Join(tmp, "plain.yaml")
	check(os.WriteFile(plain, []byte("{}\n"), 0o644))

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
		data := filepath.Join(tmp, fmt.Sprintf("data%d", i))
		p := ""
		if *prof != "" {
			p = fmt.Sprintf("%s-%d", *prof, i)
		}
		env := func(transport string) []string {
			e := append(os.Environ(), "TOOLBELT_CONFIG="+plain, "TOOLBELT_DATA="+data, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
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
	in, err := cmd.StdinPipe()
	check(err)
	outPipe, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	out := bufio.NewReaderSize(outPipe, 1<<20)
	id := 0
	request := func(method, params string) string {
		id++
		_, err := fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		check(err)
		want := fmt.Sprintf(`"id":%d,`, id)
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				log.Fatalf("%s: %v", cmd.Path, err)
			}
			if strings.Contains(line, want) {
				return line
			}
		}
	}
	request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"callcpu","version":"1"}}`)
	_, err = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	check(err)
	read := func() {
		line := request("tools/call", `{"name":"read","arguments":{"path":"file.txt"}}`)
		if !strings.Contains(line, `"result"`) || strings.Contains(line, `"isError":true`) {
			log.Fatalf("read failed: %s", line)
		}
	}
	for range 300 {
		read()
	}
	time.Sleep(300 * time.Millisecond)
	c0, t0 := cpuOf(cmd.Process.Pid), time.Now()
	for range *calls {
		read()
	}
	rate := float64(*calls) / time.Since(t0).Seconds()
	time.Sleep(300 * time.Millisecond) // the audit drain's last batch
	c1 := cpuOf(cmd.Process.Pid)
	if profile {
		stopProfile(cmd)
	}
	in.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	return float64(c1-c0) / float64(time.Microsecond) / float64(*calls), rate
}

// httpCPU serves streamable HTTP, calls it from one Go SDK client session,
// and returns the server's CPU µs per call.
func httpCPU(cmd *exec.Cmd, profile bool) (float64, float64) {
	outPipe, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(outPipe)
	re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`)
	url := ""
	for url == "" && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		log.Fatalf("%s printed no URL", cmd.Path)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "callcpu", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	check(err)
	defer cs.Close()
	args := map[string]any{"path": "file.txt"}
	read := func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		check(err)
		if res.IsError {
			log.Fatalf("read failed over HTTP: %+v", res.Content)
		}
	}
	for range 300 {
		read()
	}
	time.Sleep(300 * time.Millisecond)
	c0, t0 := cpuOf(cmd.Process.Pid), time.Now()
	for range *calls {
		read()
	}
	rate := float64(*calls) / time.Since(t0).Seconds()
	time.Sleep(300 * time.Millisecond)
	c1 := cpuOf(cmd.Process.Pid)
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

// cpuOf is the CPU time (user and system, all threads) a running process
// has used, from /proc.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	check(err)
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		log.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
