package fs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/cputime"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// Benchmarks of the file tools, each beside ripgrep (rg) on the same tree
// where rg does the same job. bench/fs.sh runs them and records the ratios.
//
//	TOOLBELT_BENCH_GREP_TREE  the tree grep searches (default: the Go module cache)

// benchRunner returns a pipeline over the file tools confined to dir.
func benchRunner(b *testing.B, dir string) *invoke.Runner {
	b.Helper()
	l, err := fsbridge.OpenLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return newRunner(b, &tool.Context{Identity: tool.Identity{Workspace: dir}, FSRoot: dir, FS: l})
}

// runTool runs one call and fails the benchmark on an error result.
func runTool(b *testing.B, r *invoke.Runner, name string, args any) string {
	return text(runToolMessage(b, r, name, args))
}

// runToolMessage runs one call and returns its result message, failing the
// benchmark on an error result.
func runToolMessage(b *testing.B, r *invoke.Runner, name string, args any) tool.ResultMessage {
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	msg := r.Run(context.Background(), tool.Call{ID: "1", Name: name, Arguments: raw})
	if msg.IsError {
		b.Fatalf("%s: %s", name, text(msg))
	}
	return msg
}

// runRG runs ripgrep and returns its output lines.
func runRG(b *testing.B, dir string, args ...string) int {
	out, err := exec.Command("rg", args...).Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return 0 // no match
	}
	if err != nil {
		b.Fatalf("rg %v: %v", args, err)
	}
	return strings.Count(string(out), "\n")
}

func needRG(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("ripgrep (rg) is not installed: apt-get install ripgrep")
	}
}

// BenchmarkGrepTree searches a large tree (the Go module cache) for a
// regular expression, with the grep tool and with rg.
func BenchmarkGrepTree(b *testing.B) {
	dir := os.Getenv("TOOLBELT_BENCH_GREP_TREE")
	if dir == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			b.Skipf("no tree to search: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		b.Skipf("no tree to search at %s", dir)
	}
	const pattern = `func NewReader\(`
	b.Run("toolbelt", func(b *testing.B) {
		r := benchRunner(b, dir)
		var got string
		start := cputime.Used()
		for b.Loop() {
			got = runTool(b, r, "grep", map[string]any{"pattern": pattern, "limit": 1000})
		}
		b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(strings.Count(got, "func NewReader(")), "matches")
	})
	b.Run("rg", func(b *testing.B) {
		needRG(b)
		n := 0
		for b.Loop() {
			// The same rules as grep: hidden files searched, .gitignore
			// honoured outside git repositories too.
			n = runRG(b, dir, "--hidden", "--no-require-git", "-n", pattern, dir)
		}
		b.ReportMetric(float64(n), "matches")
	})
}

// findTree makes 50,000 files in 500 directories of a fresh tree.
func findTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for d := range 500 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d/50), fmt.Sprintf("dir%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			ext := ".txt"
			if f%10 == 7 {
				ext = ".go"
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d%s", f, ext)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}

// BenchmarkFind50k finds the 5,000 *.go files among 50,000, with the find
// tool and with rg --files. Both report the paths they produced
// ("matches"): for find that is the paths the tool listed (its details'
// shown), all 5,000; the pipeline then cuts the text a model sees to its
// output budget and keeps the whole retrievable, and "lines-to-model"
// counts what is left in that text.
func BenchmarkFind50k(b *testing.B) {
	dir := findTree(b)
	b.Run("toolbelt", func(b *testing.B) {
		r := benchRunner(b, dir)
		var msg tool.ResultMessage
		start := cputime.Used()
		for b.Loop() {
			msg = runToolMessage(b, r, "find", map[string]any{"pattern": "*.go", "limit": 10000})
		}
		b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
		var d struct {
			Shown int `json:"shown"`
		}
		if j, err := json.Marshal(msg.Details); err != nil || json.Unmarshal(j, &d) != nil || d.Shown == 0 {
			b.Fatalf("find details: %#v", msg.Details)
		}
		b.ReportMetric(float64(d.Shown), "matches")
		b.ReportMetric(float64(strings.Count(text(msg), ".go\n")+1), "lines-to-model")
	})
	b.Run("rg", func(b *testing.B) {
		needRG(b)
		n := 0
		for b.Loop() {
			n = runRG(b, dir, "--files", "--hidden", "--no-require-git", "-g", "*.go", dir)
		}
		b.ReportMetric(float64(n), "matches")
	})
}

// BenchmarkRead10MB reads pages of a 10 MB file: the first page, and one
// in the middle (which streams through the half before it). Every page
// counts the lines of the whole file for its notice.
func BenchmarkRead10MB(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		fmt.Fprintf(&sb, "%08d the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.log"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	r := benchRunner(b, dir)
	for _, c := range []struct {
		name   string
		offset int
	}{{"first-page", 1}, {"middle-page", 100_000}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(sb.Len()))
			for b.Loop() {
				runTool(b, r, "read", map[string]any{"path": "big.log", "offset": c.offset})
			}
		})
	}
}

// BenchmarkJournaledWrite measures the write path with the store's undo
// journal (SQLite in a temp dir): a write of a small file, and a patch that
// changes three, in a local workspace (each file written is synced to
// disk) and in memory (which leaves the journal's part); with the journal
// as toolbelt uses it ("intent": every change kept before the first file
// changes, then closed) and as a journal that only records each change
// once made ("record", what the file tools did before intents). Each call
// alternates the content, so every call changes its files. cpu-ns/op is
// the process's CPU time per call, steadier than ns/op on a busy machine.
func BenchmarkJournaledWrite(b *testing.B) {
	for _, c := range []struct {
		name, tool string
		args       func(i int) map[string]any
	}{
		{"write", "write", func(i int) map[string]any {
			return map[string]any{"path": "f0.txt", "content": fmt.Sprintf("line %d\n", (i+1)%2)}
		}},
		{"patch-3-files", "apply_patch", func(i int) map[string]any {
			from, to := i%2, (i+1)%2 // the files hold "line 0" first
			var p strings.Builder
			p.WriteString("*** Begin Patch\n")
			for f := range 3 {
				fmt.Fprintf(&p, "*** Update File: f%d.txt\n@@\n-line %d\n+line %d\n", f, from, to)
			}
			p.WriteString("*** End Patch")
			return map[string]any{"patch": p.String()}
		}},
	} {
		for _, run := range []struct{ where, journal string }{
			{"local", "record"}, {"local", "intent"}, {"memory", "record"}, {"memory", "intent"},
		} {
			where := run.where
			b.Run(c.name+"/"+run.where+"/"+run.journal, func(b *testing.B) {
				dir := b.TempDir()
				var bridge fsbridge.Bridge
				if where == "local" {
					l, err := fsbridge.OpenLocal(dir)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { l.Close() })
					bridge = l
				} else {
					m, err := fsbridge.NewMemory()
					if err != nil {
						b.Fatal(err)
					}
					bridge = m
				}
				for f := range 3 {
					if err := bridge.WriteFile(context.Background(), fmt.Sprintf("f%d.txt", f), []byte("line 0\n"), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), store.DefaultFile))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				var j tool.Journal = st.Journal(store.JournalOptions{})
				if run.journal == "record" {
					j = recordOnly{j}
				}
				r := newRunner(b, &tool.Context{Identity: tool.Identity{Workspace: dir}, FSRoot: dir, FS: bridge, Journal: j})
				start := cputime.Used()
				for i := 0; b.Loop(); i++ {
					runTool(b, r, c.tool, c.args(i))
				}
				b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
