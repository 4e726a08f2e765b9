// Command loop measures the agent loop's own cost per model turn, beside
// its floor: Toolbelt's agent loop (agent.Agent with the llm client, the
// standard tools' declarations as `toolbelt run` sends them, the governed
// pipeline running each call) and bench/loop/floor, a plain Go loop
// (net/http and encoding/json, typed structs, the same declarations
// encoded once), against one replay model server on 127.0.0.1 that
// answers every turn at once with a call of read until the conversation
// has -turns results.
//
// Each loop runs in a process of its own (so its CPU time, from
// getrusage, is its own) for -convs conversations after one to warm up;
// the server reports the time its handlers took, which is taken off the
// loop's wall time. Rounds interleave the loops and wires, in an order
// that rotates; the figures are medians over rounds:
//
//   - per turn: the wall time of a turn minus the server's time, in µs;
//   - CPU per turn: the loop process's user + system time, in µs;
//   - tokens billed: the usage the loop read from the server's answers
//     (the server bills as a caching provider would: see server.go).
//
// Run it from the repository root; it builds the floor:
//
//	go run ./bench/loop [-rounds 5] [-turns 20] [-convs 5] [-wires openai,anthropic] [-imported N] [-toolbelt BIN,BIN…] [-cpuprofile FILE]
//
// -imported N adds N tools imported from an MCP server (bench/manytools)
// to the standard ones, both loops sending their declarations.
//
// -toolbelt measures several builds of this command (their Toolbelt
// loops: before and after a change) interleaved with the floor.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

var (
	role     = flag.String("role", "", "internal: server, toolbelt or export (a child process)")
	rounds   = flag.Int("rounds", 5, "rounds (each runs every loop on every wire)")
	turns    = flag.Int("turns", 20, "turns with a tool call per conversation")
	convs    = flag.Int("convs", 5, "conversations measured per loop, wire and round")
	wires    = flag.String("wires", "openai,anthropic", "wire formats: openai (Chat Completions), anthropic (Messages)")
	url      = flag.String("url", "", "internal: the replay server")
	wire     = flag.String("wire", "", "internal: the wire of a loop")
	dir      = flag.String("dir", "", "internal: the workspace and data directory")
	prof     = flag.String("cpuprofile", "", "write the toolbelt loop's CPU profile of the first round to FILE-WIRE")
	imported = flag.Int("imported", 0, "also import this many tools from an MCP server (bench/manytools: schemas of the real and realistic corpus)")
	conf     = flag.String("config", "", "internal: the Toolbelt configuration file")
	tbBins   = flag.String("toolbelt", "", "builds of this command whose Toolbelt loops to measure side by side, comma-separated (default: this one)")
)

// result is what a loop process reports.
type result struct {
	Wall, Server, CPU time.Duration
	Turns             int
	Usage             usage
}

type usage struct{ Input, CacheRead, CacheWrite, Output int }

// billed is the usage in input-token equivalents at Anthropic's list
// multipliers (cache reads 0.1×, writes 1.25×; OpenAI's cached tokens are
// also counted at 0.1×, as the GPT-5 family bills them).
func (u usage) billed() float64 {
	return float64(u.Input) + 0.1*float64(u.CacheRead) + 1.25*float64(u.CacheWrite)
}

func check(err error) { harness.Check(err) }

func main() {
	flag.Parse()
	log.SetFlags(0)
	switch *role {
	case "server":
		serve(*turns)
		return
	case "toolbelt":
		runToolbelt()
		return
	case "export":
		export()
		return
	}
	tmp, err := os.MkdirTemp("", "toolbelt-loop")
	check(err)
	defer os.RemoveAll(tmp)
	floor := harness.Build(tmp, "floor", "./bench/loop/floor")
	self, err := os.Executable()
	check(err)
	ws := filepath.Join(tmp, "ws")
	harness.Workspace(ws)
	config := filepath.Join(tmp, "toolbelt.yaml")
	check(os.WriteFile(config, []byte("{}\n"), 0o644))
	if *imported > 0 {
		many := harness.Build(tmp, "manytools", "./bench/manytools")
		check(os.WriteFile(config, fmt.Appendf(nil, "mcpServers:\n  many:\n    command: %q\n    args: [\"-corpus\", %q, \"-n\", \"%d\"]\n", many, harness.AbsCorpusDirs(), *imported), 0o644))
	}
	tools, err := exec.Command(self, "-role", "export", "-dir", ws, "-config", config).Output()
	check(err)

	srv := exec.Command(self, "-role", "server", "-turns", fmt.Sprint(*turns))
	stdin, err := srv.StdinPipe()
	check(err)
	out, err := srv.StdoutPipe()
	check(err)
	srv.Stderr = os.Stderr
	check(srv.Start())
	sc := bufio.NewScanner(out)
	sc.Scan()
	base := strings.TrimSpace(sc.Text())
	defer func() { stdin.Close(); _ = srv.Wait() }()

	fmt.Printf("agent loop vs plain Go loop: %d rounds, %d conversations of %d tool turns (+1 final) per loop, wire and round\n", *rounds, *convs, *turns)
	fmt.Printf("%s system prompt %d bytes\n", tools, len(system))
	fmt.Printf("machine: %s; load average before: %s\n", harness.Machine(), harness.LoadAverage())
	ws2 := strings.Split(*wires, ",")
	bins := map[string]string{}
	var loops []string
	for _, b := range strings.Split(cmp.Or(*tbBins, self), ",") {
		name := "toolbelt"
		if *tbBins != "" {
			name = filepath.Base(b)
		}
		bins[name] = b
		loops = append(loops, name)
	}
	loops = append(loops, "floor")
	all := map[string][]result{}
	for r := range *rounds {
		for i := range ws2 {
			w := ws2[(i+r)%len(ws2)]
			for j := range loops {
				l := loops[(j+r)%len(loops)]
				var cmd *exec.Cmd
				args := []string{"-url", base, "-wire", w, "-dir", ws, "-convs", fmt.Sprint(*convs)}
				if l == "floor" {
					cmd = exec.Command(floor, args...)
				} else {
					if *prof != "" && r == 0 {
						args = append(args, "-cpuprofile", *prof+"-"+l+"-"+w)
					}
					cmd = exec.Command(bins[l], append([]string{"-role", "toolbelt", "-turns", fmt.Sprint(*turns), "-config", config}, args...)...)
				}
				cmd.Stderr = os.Stderr
				b, err := cmd.Output()
				check(err)
				var res result
				check(json.Unmarshal(b, &res))
				all[w+"/"+l] = append(all[w+"/"+l], res)
			}
		}
	}
	fmt.Printf("load average after: %s\n\n", harness.LoadAverage())
	fmt.Println("| wire | loop | per turn − server (µs) | CPU per turn (µs) | server per turn (µs) | tokens per conversation: input / cache read / cache write / output | billed (input-equivalent) |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, w := range ws2 {
		med := map[string][2]float64{}
		for _, l := range loops {
			rs := all[w+"/"+l]
			var own, cpu, srvT []float64
			for _, x := range rs {
				n := float64(x.Turns)
				own = append(own, float64(x.Wall-x.Server)/n/1e3)
				cpu = append(cpu, float64(x.CPU)/n/1e3)
				srvT = append(srvT, float64(x.Server)/n/1e3)
			}
			u := rs[0].Usage
			c := float64(*convs)
			med[l] = [2]float64{harness.Median(own), harness.Median(cpu)}
			fmt.Printf("| %s | %s | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %.0f | %.0f / %.0f / %.0f / %.0f | %.0f |\n", w, l,
				harness.Median(own), slices.Min(own), slices.Max(own), harness.Median(cpu), slices.Min(cpu), slices.Max(cpu), harness.Median(srvT),
				float64(u.Input)/c, float64(u.CacheRead)/c, float64(u.CacheWrite)/c, float64(u.Output)/c, u.billed()/c)
		}
		for _, l := range loops[:len(loops)-1] {
			fmt.Printf("| %s | ratio %s ÷ floor | %.2f× | %.2f× | | | |\n", w, l, med[l][0]/med["floor"][0], med[l][1]/med["floor"][1])
		}
	}
}
