// Command memory measures memory_search in a fresh process beside its
// floor, the sqlite3 command-line shell running the same FTS5 query on the
// same index: 10,000 generated notes (three sections of 48 words each,
// drawn from 5,000 words, some common), indexed once by a first
// `toolbelt call memory_search`; then, in interleaved rounds,
// `toolbelt call memory_search` (a new process: store opened, the recorded
// scan trusted, the query run, the result printed) and `sqlite3 DB "SELECT
// …"` (the query memory_search runs, on the file Toolbelt indexed). It
// prints the medians of wall and CPU time (rusage) per search and the
// load average. See bench/memory.md.
//
//	go run ./bench/memory [-rounds 15] [-notes 10000]
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

func main() {
	rounds := flag.Int("rounds", 15, "interleaved rounds (each runs every query on both sides)")
	n := flag.Int("notes", 10000, "notes in the memory")
	flag.Parse()
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		log.Fatal("the floor is the sqlite3 command-line shell: apt-get install -y sqlite3")
	}
	dir, bin, remove := harness.Setup("bench-memory-", "")
	defer remove()
	ws := notes(filepath.Join(dir, "workspace"), *n)
	env := harness.Env(dir, "")
	queries := []string{"w1b w2c", "w10q harbour", "w3d w40m w7h", "w123f", "w1387h", "w5f w6g"}
	search := func(q string) *exec.Cmd {
		return harness.Call(bin, env, "memory_search", ws, fmt.Sprintf(`{"query":%q}`, q))
	}
	start := time.Now()
	harness.Timed(search(queries[0]))
	log.Printf("indexed %d notes in %v", *n, time.Since(start).Round(time.Millisecond))
	db := filepath.Join(dir, "data", "toolbelt.db")
	scope, _, _ := harness.Timed(exec.Command(sqlite, db, "SELECT DISTINCT scope FROM memory_chunks"))
	floor := func(q string) *exec.Cmd {
		// The query store.Memory.Search runs on SQLite: each word quoted,
		// any may match, bm25 with the title weighing double.
		match := `"` + strings.Join(strings.Fields(q), `" OR "`) + `"`
		return exec.Command(sqlite, "-newline", "\x1e", db, fmt.Sprintf(`SELECT c.id, c.path, c.start_line, c.end_line, c.body, -f.rank
FROM (SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH '%s' AND rank MATCH 'bm25(2.0, 1.0)') f
JOIN memory_chunks c ON c.id = f.rowid WHERE c.scope = '%s' ORDER BY f.rank LIMIT 6`, match, strings.TrimSpace(string(scope))))
	}
	// Both sides find the same chunks (the floor's rows end in "\x1e":
	// the chunks' text holds newlines).
	for _, q := range queries {
		tb, _, _ := harness.Timed(search(q))
		fl, _, _ := harness.Timed(floor(q))
		for line := range strings.SplitSeq(strings.TrimSuffix(string(fl), "\x1e"), "\x1e") {
			if path := strings.Split(line, "|"); len(path) > 1 && !strings.Contains(string(tb), path[1]) {
				log.Fatalf("query %q: sqlite3 found %s, memory_search did not:\n%s", q, path[1], tb)
			}
		}
	}
	load0 := harness.LoadAverage()
	var tb, fl harness.Sample
	for r := range *rounds {
		for i, q := range queries {
			sides := []func(){
				func() { _, w, c := harness.Timed(search(q)); tb.Add(w, c) },
				func() { _, w, c := harness.Timed(floor(q)); fl.Add(w, c) },
			}
			if (r+i)%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0]
			}
			sides[0]()
			sides[1]()
		}
	}
	v, _, _ := harness.Timed(exec.Command(sqlite, "--version"))
	tw, tc := tb.Medians()
	fw, fc := fl.Medians()
	fmt.Printf("memory_search, fresh process, %d notes; %s; sqlite3 %s\n", *n, harness.Machine(), strings.Fields(string(v))[0])
	fmt.Printf("load average: %s before, %s after; %d rounds × %d queries, interleaved\n", load0, harness.LoadAverage(), *rounds, len(queries))
	fmt.Printf("| side | wall p50 | CPU p50 |\n| --- | --- | --- |\n")
	fmt.Printf("| toolbelt call memory_search | %s | %s |\n", harness.Ms(tw), harness.Ms(tc))
	fmt.Printf("| sqlite3 (the same FTS5 query) | %s | %s |\n", harness.Ms(fw), harness.Ms(fc))
	fmt.Printf("| ratio | %s |\n", harness.Ratio(&tb, &fl))
}

// notes writes n generated notes (memory/note-NNNNN.md) into ws, dated an
// hour ago, as a memory's notes mostly are (notes written within the
// racy window are read again by design), and returns ws.
func notes(ws string, n int) string {
	harness.Check(os.MkdirAll(filepath.Join(ws, "memory"), 0o755))
	r := rand.New(rand.NewPCG(1, 2))
	const vocab = 5000
	word := func() string { // skewed: some words common
		i := int(vocab * r.Float64() * r.Float64())
		return fmt.Sprintf("w%x%c", i, 'a'+rune(i%26))
	}
	for i := range n {
		var sb strings.Builder
		for s := range 3 {
			fmt.Fprintf(&sb, "## Section %d %s %s\n", s, word(), word())
			for range 4 {
				for range 12 {
					sb.WriteString(word() + " ")
				}
				sb.WriteString("\n")
			}
			sb.WriteString("\n")
		}
		harness.Check(os.WriteFile(filepath.Join(ws, "memory", fmt.Sprintf("note-%05d.md", i)), []byte(sb.String()), 0o644))
	}
	hourAgo := time.Now().Add(-time.Hour)
	harness.Check(filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, hourAgo, hourAgo)
	}))
	return ws
}
