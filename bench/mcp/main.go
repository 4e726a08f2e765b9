// Command mcp measures Toolbelt's MCP server from a real MCP client (the Go
// SDK's): the round trip of a read of a 4 KB file over stdio and over
// streamable HTTP, the cold start from exec to the first tools/list answer,
// and 1,000 concurrent calls over HTTP. It builds the toolbelt binary first.
//
//	go run ./bench/mcp [-n 2000] [-starts 30] [-concurrent 1000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

func main() {
	n := flag.Int("n", 2000, "round trips per transport")
	starts := flag.Int("starts", 30, "cold starts to measure")
	concurrent := flag.Int("concurrent", 1000, "concurrent calls over HTTP")
	flag.Parse()
	log.SetFlags(0)

	tmp, bin, remove := harness.Setup("toolbelt-bench", "")
	defer remove()
	ws, _ := harness.Workspace(tmp)
	env := harness.Env(tmp, "")
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	args := map[string]any{"path": "file.txt"}

	fmt.Printf("Toolbelt MCP server, %d round trips of read (4 KB file) per transport\n\n", *n)
	fmt.Println("| measurement | p50 | p90 | p99 | notes |")
	fmt.Println("| --- | --- | --- | --- | --- |")

	// stdio
	cmd := exec.Command(bin, "mcp", "--workspace", ws)
	cmd.Env = env
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	check(err)
	row("read round trip, stdio (Go SDK client)", roundTrips(ctx, cs, args, *n), "one client, sequential calls")
	cs.Close()
	row("read round trip, stdio (minimal JSON-RPC client)", rawRoundTrips(bin, ws, env, *n), "the server's own latency: lines written and read directly")

	// HTTP
	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--workspace", ws)
	serve.Env = env
	endpoint := harness.Serve(serve)
	defer harness.Stop(serve)
	hs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	check(err)
	row("read round trip, streamable HTTP", roundTrips(ctx, hs, args, *n), "one client, sequential calls")

	// Concurrent calls over HTTP.
	var failed atomic.Int64
	var wg sync.WaitGroup
	lat := make([]time.Duration, *concurrent)
	start := time.Now()
	for i := range *concurrent {
		wg.Go(func() {
			t0 := time.Now()
			res, err := hs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
			lat[i] = time.Since(t0)
			if err != nil || res.IsError {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	total := time.Since(start)
	row(fmt.Sprintf("%d concurrent reads, streamable HTTP", *concurrent), lat,
		fmt.Sprintf("all in %s, %d failed", total.Round(time.Millisecond), failed.Load()))
	hs.Close()

	// Cold start: exec to the first tools/list answer.
	var cold []time.Duration
	for range *starts {
		cmd := exec.Command(bin, "mcp", "--workspace", ws)
		cmd.Env = env
		t0 := time.Now()
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		check(err)
		_, err = cs.ListTools(ctx, nil)
		check(err)
		cold = append(cold, time.Since(t0))
		cs.Close()
	}
	row("cold start: exec to the first tools/list answer", cold, "initialize + tools/list, stdio")
}

func roundTrips(ctx context.Context, cs *sdk.ClientSession, args map[string]any, n int) []time.Duration {
	for range 50 { // warm up
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		check(err)
	}
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: args})
		lat[i] = time.Since(t0)
		check(err)
		if res.IsError {
			log.Fatalf("read failed: %+v", res.Content)
		}
	}
	return lat
}

// rawRoundTrips measures the same calls with a client that writes and reads
// JSON-RPC lines itself, so the Go SDK client's decoding is not counted.
func rawRoundTrips(bin, ws string, env []string, n int) []time.Duration {
	cmd := exec.Command(bin, "mcp", "--workspace", ws)
	cmd.Env = env
	s := harness.Start(cmd, "raw")
	defer s.Close()
	call := func() {
		if line := s.Request("tools/call", `{"name":"read","arguments":{"path":"file.txt"}}`); !strings.Contains(line, `"result"`) || strings.Contains(line, `"isError":true`) {
			log.Fatalf("read failed: %s", line)
		}
	}
	for range 50 {
		call()
	}
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		call()
		lat[i] = time.Since(t0)
	}
	return lat
}

func row(name string, lat []time.Duration, notes string) {
	slices.Sort(lat)
	q := func(p float64) string {
		d := lat[int(p*float64(len(lat)-1))]
		if d < time.Millisecond {
			return fmt.Sprintf("%.3f ms", float64(d)/1e6)
		}
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	fmt.Printf("| %s | %s | %s | %s | %s |\n", name, q(0.5), q(0.9), q(0.99), notes)
}

func check(err error) { harness.Check(err) }
