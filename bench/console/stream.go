package main

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"log"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// stream is a calls page's live stream, connected and drained.
type stream struct {
	cancel func()
	done   chan struct{}
	// rows are the "row" events received and calls the calls they were
	// of; the stream's reader writes them until done is closed.
	rows  int
	calls map[string]bool
}

var eventsURL = regexp.MustCompile(`data-events="([^"]+)"`)

// rowStart is how the first data line of a row event starts: the call's
// id follows.
const rowStart = `data: <tr id="call-`

// openStream loads the calls page, as a browser does, and connects to the
// event stream it names; it returns once the server has answered.
func openStream(base string) *stream {
	page, _ := fetch(base + "/calls")
	m := eventsURL.FindSubmatch(page)
	if m == nil {
		log.Fatal("the calls page names no event stream (data-events)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+html.UnescapeString(string(m[1])), nil)
	harness.Check(err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	harness.Check(err)
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("the calls page's event stream: %s", resp.Status)
	}
	s := &stream{cancel: cancel, done: make(chan struct{}), calls: map[string]bool{}}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			if sc.Text() == "event: row" {
				s.rows++
			} else if rest, ok := strings.CutPrefix(sc.Text(), rowStart); ok {
				id, _, _ := strings.Cut(rest, `"`)
				s.calls[id] = true
			}
		}
	}()
	return s
}

// close disconnects the stream and returns the rows it received and the
// calls they were of.
func (s *stream) close() (rows, calls int) {
	s.cancel()
	<-s.done
	return s.rows, len(s.calls)
}

// run is one throughput run's figures.
type run struct {
	streams int           // live streams open
	rate    float64       // calls per second
	cpu     time.Duration // the server's CPU time per call
	// shown is the share of the calls made that each stream showed (1
	// when none was missed), and rows its row events per call made; both
	// -1 with no stream.
	shown, rows float64
}

// settle is how long the streams stay connected after the calls stop, so
// that their next look at the audit log delivers the last calls.
const settle = 3 * time.Second

// measure makes calls with every session for -seconds while streams live
// streams are connected and drained.
func measure(ctx context.Context, s *server, sessions []*sdk.ClientSession, streams int) run {
	var open []*stream
	for range streams {
		open = append(open, openStream(s.base))
	}
	pid := s.cmd.Process.Pid
	defer profile(pid, streams)()
	var n atomic.Int64
	var wg sync.WaitGroup
	cpu0, t0 := harness.CPU(pid), time.Now()
	end := t0.Add(time.Duration(*seconds * float64(time.Second)))
	for _, cs := range sessions {
		wg.Go(func() {
			for time.Now().Before(end) {
				call(ctx, cs, &mix[0])
				n.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(t0), harness.CPU(pid)-cpu0
	r := run{streams: streams, rate: float64(n.Load()) / elapsed.Seconds(), cpu: cpu / time.Duration(n.Load()), shown: -1, rows: -1}
	if streams > 0 {
		time.Sleep(settle)
		var rows, calls int
		for _, st := range open {
			r, c := st.close()
			rows, calls = rows+r, calls+c
		}
		made := float64(n.Load()) * float64(streams)
		r.shown, r.rows = float64(calls)/made, float64(rows)/made
	}
	return r
}

// throughput measures calls per second with each number of streams in
// configs, -rounds times, the order rotating from round to round; runs[i]
// are configs[i]'s.
func throughput(ctx context.Context, s *server, configs []int) [][]run {
	var sessions []*sdk.ClientSession
	for range *clients {
		cs := connect(ctx, s.endpoint)
		defer cs.Close()
		for range 50 { // warm up
			call(ctx, cs, &mix[0])
		}
		sessions = append(sessions, cs)
	}
	runs := make([][]run, len(configs))
	for r := range *rounds {
		for k := range configs {
			i := (r + k) % len(configs)
			runs[i] = append(runs[i], measure(ctx, s, sessions, configs[i]))
		}
	}
	printHead(configs)
	return runs
}

// printHead says how the throughput was measured.
func printHead(configs []int) {
	fmt.Printf("%d Go SDK clients calling read (4 KB file) as fast as they can for %.0f s a run; %d rounds of %d runs (%v live streams), the order rotating; the server's CPU time from /proc (10 ms ticks).\n\n",
		*clients, *seconds, *rounds, len(configs), configs)
}

func printThroughput(runs [][]run) {
	fmt.Println("| console streams open | calls/s, median | ÷ none, median | ÷ none, each round | server CPU per call, median | calls each stream showed ÷ calls made | row events per call, each stream |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	base := rates(runs[0])
	for _, rs := range runs {
		rate := rates(rs)
		var each []string
		var ratios []float64
		for j := range rs {
			ratios = append(ratios, rate[j]/base[j])
			each = append(each, fmt.Sprintf("%.2f", rate[j]/base[j]))
		}
		var cpus []time.Duration
		var shown, rows []float64
		for _, r := range rs {
			cpus = append(cpus, r.cpu)
			shown, rows = append(shown, r.shown), append(rows, r.rows)
		}
		fmt.Printf("| %d | %.0f | %.2f | %v | %.0f µs | %s | %s |\n", rs[0].streams, harness.Median(rate), harness.Median(ratios),
			each, float64(harness.Quantile(cpus, .5))/1e3, spread(shown), spread(rows))
	}
}

// rates are the runs' calls per second.
func rates(rs []run) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.rate)
	}
	return out
}

// spread is the median of xs with their range; "—" when they are -1 (no
// stream).
func spread(xs []float64) string {
	if xs[0] < 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", harness.Median(xs), slices.Min(xs), slices.Max(xs))
}

// profile starts perf recording the server's CPU (with call graphs) into
// -perf/streams-N.R.data when -perf names a directory, and returns what
// stops it.
func profile(pid, streams int) (stop func()) {
	if *perfDir == "" {
		return func() {}
	}
	out, err := os.CreateTemp(*perfDir, fmt.Sprintf("streams-%d.*.data", streams))
	harness.Check(err)
	out.Close()
	cmd := exec.Command("perf", "record", "-g", "-F", "499", "-p", strconv.Itoa(pid), "-o", out.Name())
	harness.Check(cmd.Start())
	time.Sleep(200 * time.Millisecond) // perf attaches
	return func() {
		harness.Check(cmd.Process.Signal(os.Interrupt))
		_ = cmd.Wait()
	}
}
