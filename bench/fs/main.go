// Command fs measures the find and grep tools as whole processes
// (`toolbelt call find` / `toolbelt call grep`: start, store, pipeline,
// walk, result printed) beside their floors: find for *.go beside GNU find
// (`find TREE -name '*.go'`), on 50,000 generated files in 500 directories
// (5,000 of them *.go) and on this repository; grep for `func NewReader\(`
// beside ripgrep on one thread (`rg -j1 --hidden --no-require-git`, grep's
// rules: hidden files searched, .gitignore honoured outside git
// repositories too), on the Go module cache and on this repository. In
// interleaved rounds it records each side's wall and CPU time (rusage) and
// prints their medians, what each side found, and the load average.
// See bench/fs.md.
//
//	go run ./bench/fs [-rounds 9] [-modcache DIR]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

func main() {
	rounds := flag.Int("rounds", 9, "interleaved rounds")
	modcache := flag.String("modcache", "", "the tree grep searches besides this repository (default: go env GOMODCACHE)")
	flag.Parse()
	for _, p := range []string{"find", "rg"} {
		if _, err := exec.LookPath(p); err != nil {
			log.Fatalf("%s is needed for the comparison: apt-get install -y findutils ripgrep", p)
		}
	}
	if *modcache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		harness.Check(err)
		*modcache = strings.TrimSpace(string(out))
	}
	repo, err := os.Getwd()
	harness.Check(err)
	dir, bin, remove := harness.Setup("bench-fs-", "")
	defer remove()
	gen := tree(filepath.Join(dir, "tree"))
	env := harness.Env(dir, "")
	call := func(name, ws, args string) *exec.Cmd { return harness.Call(bin, env, name, ws, args) }
	// found counts what one side's output reports: paths (one a line) or
	// the matches in a tool's details.
	lines := func(out []byte) string { return fmt.Sprint(bytes.Count(out, []byte("\n"))) }
	details := func(key string) func([]byte) string {
		return func(out []byte) string {
			var msg struct{ Details map[string]any }
			harness.Check(json.Unmarshal(out, &msg))
			return fmt.Sprint(msg.Details[key])
		}
	}
	const pattern = `func NewReader\(`
	type side struct {
		name   string
		cmd    func() *exec.Cmd
		found  func([]byte) string
		okExit []int // rg exits with 1 when nothing matches
		s      harness.Sample
		last   string
	}
	type figure struct {
		name  string
		sides [2]*side
	}
	figures := []figure{
		{"find *.go, 50,000 generated files", [2]*side{
			{name: "toolbelt call find", cmd: func() *exec.Cmd { return call("find", gen, `{"pattern":"*.go","limit":10000}`) }, found: details("total")},
			{name: "GNU find", cmd: func() *exec.Cmd { return exec.Command("find", gen, "-name", "*.go") }, found: lines},
		}},
		{"find *.go, this repository", [2]*side{
			{name: "toolbelt call find", cmd: func() *exec.Cmd { return call("find", repo, `{"pattern":"*.go","limit":10000}`) }, found: details("total")},
			{name: "GNU find", cmd: func() *exec.Cmd { return exec.Command("find", repo, "-name", "*.go") }, found: lines},
		}},
		{"grep " + pattern + ", the Go module cache", [2]*side{
			{name: "toolbelt call grep", cmd: func() *exec.Cmd { return call("grep", *modcache, fmt.Sprintf(`{"pattern":%q,"limit":1000}`, pattern)) }, found: details("matches")},
			{name: "rg -j1", cmd: func() *exec.Cmd { return rg(pattern, *modcache) }, found: lines, okExit: []int{1}},
		}},
		{"grep " + pattern + ", this repository", [2]*side{
			{name: "toolbelt call grep", cmd: func() *exec.Cmd { return call("grep", repo, fmt.Sprintf(`{"pattern":%q,"limit":1000}`, pattern)) }, found: details("matches")},
			{name: "rg -j1", cmd: func() *exec.Cmd { return rg(pattern, repo) }, found: lines, okExit: []int{1}},
		}},
	}
	// A first run of each side fills the page cache and the store.
	for _, f := range figures {
		for _, s := range f.sides {
			harness.Timed(s.cmd(), s.okExit...)
		}
	}
	load0 := harness.LoadAverage()
	for r := range *rounds {
		for _, f := range figures {
			for i := range 2 {
				s := f.sides[(r+i)%2] // each side goes first in every other round
				out, wall, cpu := harness.Timed(s.cmd(), s.okExit...)
				s.s.Add(wall, cpu)
				s.last = s.found(out)
			}
		}
	}
	rgv, _ := exec.Command("rg", "--version").Output()
	fv, _ := exec.Command("find", "--version").Output()
	fmt.Printf("find and grep as whole processes; %s; %s, %s\n", harness.Machine(), firstLine(fv), firstLine(rgv))
	fmt.Printf("load average: %s before, %s after; %d rounds, interleaved\n", load0, harness.LoadAverage(), *rounds)
	fmt.Printf("| figure | side | wall p50 | CPU p50 | found | toolbelt ÷ floor |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, f := range figures {
		for i, s := range f.sides {
			w, c := s.s.Medians()
			ratio := ""
			if i == 0 {
				ratio = harness.Ratio(&f.sides[0].s, &f.sides[1].s)
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", f.name, s.name, harness.Ms(w), harness.Ms(c), s.last, ratio)
		}
	}
}

// rg searches dir for pattern on one thread, with the grep tool's rules.
func rg(pattern, dir string) *exec.Cmd {
	return exec.Command("rg", "-j1", "--hidden", "--no-require-git", "-n", pattern, dir)
}

func firstLine(b []byte) string {
	l, _, _ := strings.Cut(string(b), "\n")
	return l
}

// tree makes 50,000 empty files in 500 directories under dir, every tenth
// one *.go, and returns dir.
func tree(dir string) string {
	for d := range 500 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d/50), fmt.Sprintf("dir%03d", d))
		harness.Check(os.MkdirAll(sub, 0o755))
		for f := range 100 {
			ext := ".txt"
			if f%10 == 7 {
				ext = ".go"
			}
			harness.Check(os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d%s", f, ext)), nil, 0o644))
		}
	}
	return dir
}
