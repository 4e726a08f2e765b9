package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/provider"
	"github.com/toolbelt/toolbelt/tool"
)

// system is the system prompt both loops send (written to system.txt for
// the floor).
var system = strings.Repeat("You are a careful coding agent. Read before you write; say what you changed. ", 24)

// conversations counts the conversations a process had.
var conversations int

// prompt is a conversation's first message: each one's is its own, so
// that only the tools and the system prompt are shared between them.
func prompt() string {
	conversations++
	return fmt.Sprintf("Conversation %d.%d: read file.txt again and again.", os.Getpid(), conversations)
}

// specs are the models the wires are spoken to.
var specs = map[string]string{"openai": "openai/gpt-bench", "anthropic": "anthropic/claude-bench"}

// open opens Toolbelt on dir's workspace as `toolbelt run` does (an
// empty configuration: the standard tools; with -imported, an MCP server's
// tools beside them, imported before Open returns) and returns its runner.
func open(dir string) (*toolbelt.Toolbelt, *invoke.Runner) {
	ctx := context.Background()
	text := []byte("{}\n")
	if *conf != "" {
		var err error
		text, err = os.ReadFile(*conf)
		check(err)
	}
	cfg, err := config.Parse("loop", text)
	check(err)
	tb, err := toolbelt.Open(ctx, toolbelt.Options{Config: cfg, Workspace: filepath.Join(dir, "workspace"), DataDir: filepath.Join(dir, "data")})
	check(err)
	r, err := tb.Runner(tool.Identity{Channel: "cli", Owner: true})
	check(err)
	return tb, r
}

func client(wire, base string) llm.Client {
	u := base
	if wire == "openai" {
		u += "/v1"
	}
	c, err := llm.New(specs[wire], llm.Options{BaseURL: u, APIKey: "k"})
	check(err)
	return c
}

// export writes the tool declarations each wire's requests carry, and the
// system prompt, for the floor.
func export() {
	tb, r := open(*dir)
	defer tb.Close(context.Background())
	ex := provider.NewExporter(nil)
	offered := r.Tools(nil)
	fmt.Printf("tools: %d registered, %d offered (the others need configuration);", len(tb.Registry().List()), len(offered))
	for _, w := range []string{"openai", "anthropic"} {
		out, err := ex.Export(offered, client(w, "http://127.0.0.1:1").Target())
		check(err)
		fmt.Printf(" %s %d bytes of declarations;", w, len(out.Tools))
		check(os.WriteFile(filepath.Join(*dir, "tools-"+w+".json"), out.Tools, 0o644))
	}
	check(os.WriteFile(filepath.Join(*dir, "system.txt"), []byte(system), 0o644))
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runToolbelt runs the conversations through Toolbelt's agent loop and
// prints the result as JSON.
func runToolbelt() {
	ctx := context.Background()
	tb, r := open(*dir)
	defer tb.Close(ctx)
	a := &agent.Agent{Client: client(*wire, *url), Runner: r, System: system, MaxTurns: *turns + 1}
	conv := func() (int, usage) {
		tr, err := a.Run(ctx, nil, llm.UserText(prompt()))
		check(err)
		var u usage
		n := 0
		for _, m := range tr {
			if m.Usage != nil {
				n++
				u.Input += m.Usage.Input
				u.CacheRead += m.Usage.CacheRead
				u.CacheWrite += m.Usage.CacheWrite
				u.Output += m.Usage.Output
			}
		}
		return n, u
	}
	conv() // warm up
	if *prof != "" {
		f, err := os.Create(*prof)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	var res result
	srv0, _ := stats(*url)
	cpu0, start := cpuTime(), time.Now()
	for range *convs {
		n, u := conv()
		res.Turns += n
		res.Usage.Input += u.Input
		res.Usage.CacheRead += u.CacheRead
		res.Usage.CacheWrite += u.CacheWrite
		res.Usage.Output += u.Output
	}
	res.Wall, res.CPU = time.Since(start), cpuTime()-cpu0
	srv1, _ := stats(*url)
	res.Server = srv1 - srv0
	check(json.NewEncoder(os.Stdout).Encode(res))
}
