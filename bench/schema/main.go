// Command schema times the schema compiler on the corpus
// (testdata/mcp-tools and schema/testdata/corpus): every tool compiled for one dialect is one
// round; it prints, per dialect, the median wall time of a round and the
// mean CPU time (user and system, all threads: GC included) as JSON lines, the same lines openclaw.mjs prints for OpenClaw's
// normalizer, so bench/schema.sh can set them side by side.
//
//	go run ./bench/schema -rounds 200 gemini xai
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
	"github.com/toolbelt/toolbelt/schema"
)

func main() {
	dir := flag.String("corpus", harness.CorpusDirs, "directories of tools/list answers, comma-separated")
	rounds := flag.Int("rounds", 200, "rounds per dialect")
	impl := flag.String("name", "toolbelt", "what the lines call this build")
	flag.Parse()
	docs, err := load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schema bench:", err)
		os.Exit(2)
	}
	for _, name := range flag.Args() {
		d, err := schema.ParseDialect(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "schema bench:", err)
			os.Exit(2)
		}
		for _, doc := range docs { // warm up
			d.Compile(doc)
		}
		walls := make([]float64, *rounds)
		cpu := cpuTime()
		for i := range *rounds {
			w := time.Now()
			for _, doc := range docs {
				d.Compile(doc)
			}
			walls[i] = float64(time.Since(w).Nanoseconds()) / 1e6
		}
		cpuMS := float64((cpuTime() - cpu).Nanoseconds()) / 1e6 / float64(*rounds)
		line, _ := json.Marshal(map[string]any{
			"impl": *impl, "dialect": name, "tools": len(docs),
			"wall_ms": harness.Median(walls), "cpu_ms": cpuMS,
		})
		fmt.Println(string(line))
	}
}

// load returns every tool's input schema in the corpus.
func load(dirs string) ([]any, error) {
	tools, err := harness.Corpus(dirs)
	if err != nil {
		return nil, err
	}
	docs := make([]any, len(tools))
	for i, t := range tools {
		if docs[i], err = schema.Decode(t.InputSchema); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
	}
	return docs, nil
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
