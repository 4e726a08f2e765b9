package layers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// module is this module's path.
const module = "github.com/toolbelt/toolbelt"

// core are the packages every Go program that embeds Toolbelt links.
var core = []string{"tool", "registry", "schema", "invoke"}

// forbidden are what the core must not link, each with the reason: a
// package is forbidden when its import path is prefix or lies under it.
var forbidden = []struct{ prefix, reason string }{
	{"github.com/jackc/pgx", "the PostgreSQL driver — a program that keeps no state links no database, and the one that opens a store links its driver"},
	{"modernc.org/sqlite", "the SQLite driver (SQLite's C translated to Go, several megabytes) — a program that keeps no state links no database"},
	{"github.com/riverqueue/river", "the job queue — async tools reach the pipeline through invoke.JobQueue, which jobs.Queue satisfies"},
	{"github.com/goccy/go-yaml", "toolbelt.yaml's parser — the core takes Go values, and config turns the file into them"},
	{module + "/store", "the state store, which links both database drivers"},
	{module + "/config", "toolbelt.yaml, which links the YAML parser"},
	{module + "/jobs", "the job queue, which links River and the store"},
}

// invokeBudget is the most packages from outside the standard library and
// this module that invoke may link (docs/development.md measures them).
const invokeBudget = 60

// pkg is a package as `go list -json` describes it.
type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
	DepOnly    bool
	Module     *struct{ Path string }
	// Dir and GoFiles are where its source is, test files left out.
	Dir     string
	GoFiles []string
}

// graph is every package of the module and every package they import.
type graph map[string]*pkg

// load returns what `go list` says about the module and its dependencies.
// It skips the test when the go command is not on PATH.
func load(t *testing.T) graph {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: these tests read what `go list` says about the packages; put Go's bin directory on PATH to run them")
	}
	g, err := listed()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// listed runs `go list` once for all the tests.
var listed = sync.OnceValues(func() (graph, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Standard,DepOnly,Module,Dir,GoFiles", module+"/...")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return g, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %v", err)
		}
		g[p.ImportPath] = &p
	}
})

// chain returns the shortest chain of imports from the package from to a
// package that match reports true for, from first, or nil when there is
// none.
func (g graph) chain(from string, match func(path string) bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if match(p) {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return path
		}
		for _, q := range g[p].Imports {
			if _, known := g[q]; !known {
				continue // "C", cgo's, is no package
			}
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}

// deps returns every package from links, from itself.
func (g graph) deps(from string) []string {
	var all []string
	g.chain(from, func(p string) bool {
		all = append(all, p)
		return false
	})
	return all
}

// local returns the path of a package of this module relative to the
// module ("invoke"), and whether it is one.
func local(path string) (string, bool) {
	if path == module {
		return ".", true // the composition root, package toolbelt
	}
	return strings.CutPrefix(path, module+"/")
}

// short writes a chain of imports with this module's packages relative to
// the module.
func short(path []string) string {
	out := make([]string, len(path))
	for i, p := range path {
		if rel, ok := local(p); ok {
			p = rel
		}
		out[i] = p
	}
	return strings.Join(out, " → ")
}

// TestCoreLinksNoDriver: tool, registry, schema and invoke import, directly
// or not, no database driver, no River, no YAML, and not this module's
// store, config or jobs. Audit records, job events and policy rules reach
// the pipeline through leaf packages (audit, policy) and interfaces
// (invoke.JobQueue, invoke.Auditor).
func TestCoreLinksNoDriver(t *testing.T) {
	t.Parallel()
	g := load(t)
	for _, c := range core {
		for _, f := range forbidden {
			path := g.chain(module+"/"+c, func(p string) bool {
				return p == f.prefix || strings.HasPrefix(p, f.prefix+"/")
			})
			if path != nil {
				t.Errorf("%s links %s: %s.\n\tThe core (%s) must not link %s, %s (docs/development.md, Layers).",
					c, short(path[len(path)-1:]), short(path), strings.Join(core, ", "), f.prefix, f.reason)
			}
		}
	}
}

// TestPolicyLinksNoNetwork: policy only parses rules, so it links no HTTP
// stack and none of the network code (the sandbox's proxy, the web guard):
// a domain: rule's host names are compared by internal/hostmatch, which
// the proxy shares.
func TestPolicyLinksNoNetwork(t *testing.T) {
	t.Parallel()
	g := load(t)
	for _, bad := range []string{"net/http", module + "/internal/netproxy", module + "/internal/netguard"} {
		if path := g.chain(module+"/policy", func(p string) bool { return p == bad }); path != nil {
			t.Errorf("policy links %s: %s. Compare host names with internal/hostmatch; network code stays out of the rules.", bad, short(path))
		}
	}
}

// TestInvokeDependencyBudget: invoke links at most invokeBudget packages
// from outside the standard library and this module.
func TestInvokeDependencyBudget(t *testing.T) {
	t.Parallel()
	g := load(t)
	byModule := map[string][]string{}
	n := 0
	for _, p := range g.deps(module + "/invoke") {
		if _, mine := local(p); mine || g[p].Standard {
			continue
		}
		n++
		m := p
		if g[p].Module != nil {
			m = g[p].Module.Path
		}
		byModule[m] = append(byModule[m], p)
	}
	t.Logf("invoke links %d packages from outside the standard library and this module, of %d modules", n, len(byModule))
	if n > invokeBudget {
		var b strings.Builder
		for _, m := range slices.Sorted(maps.Keys(byModule)) {
			fmt.Fprintf(&b, "\n\t%s: %d (%s)", m, len(byModule[m]), strings.Join(byModule[m], " "))
		}
		t.Errorf("invoke links %d packages from outside the standard library and this module, more than its budget of %d (docs/development.md): every dependency of the core needs a reason; move what needs a new one out of the core, or behind an interface. By module:%s",
			n, invokeBudget, b.String())
	}
}

// floors is the map of docs/development.md: the floor of each package or
// pattern ("tools/..." is tools and every package under it).
type floors map[string]int

// readMap reads the table under the Layers heading of docs/development.md:
// rows of a floor and the packages on it, each in backquotes.
func readMap(t *testing.T) floors {
	t.Helper()
	const page = "../../docs/development.md"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Layers\n")
	if !ok {
		t.Fatalf("%s has no Layers section", page)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	quoted := regexp.MustCompile("`([^`]+)`")
	m := floors{}
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		floor, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // the header and its rule
		}
		for _, q := range quoted.FindAllStringSubmatch(cells[2], -1) {
			if prev, dup := m[q[1]]; dup {
				t.Errorf("%s puts %s on floors %d and %d", page, q[1], prev, floor)
			}
			m[q[1]] = floor
		}
	}
	if len(m) == 0 {
		t.Fatalf("%s: no table of floors and packages under Layers", page)
	}
	return m
}

// floor returns the floor of a package of this module (relative path): an
// entry naming it, else the longest pattern it falls under.
func (m floors) floor(rel string) (int, bool) {
	if f, ok := m[rel]; ok {
		return f, true
	}
	best, floor := "", 0
	for entry, f := range m {
		dir, ok := strings.CutSuffix(entry, "/...")
		if ok && (rel == dir || strings.HasPrefix(rel, dir+"/")) && len(entry) > len(best) {
			best, floor = entry, f
		}
	}
	return floor, best != ""
}

// TestMap: the map in docs/development.md puts every package of the module
// on a floor, names no package that does not exist, and no package imports
// one on a higher floor.
func TestMap(t *testing.T) {
	t.Parallel()
	g := load(t)
	m := readMap(t)
	var mine []string
	for path, p := range g {
		if rel, ok := local(path); ok && !p.DepOnly {
			mine = append(mine, rel)
		}
	}
	slices.Sort(mine)
	for entry := range m {
		dir, pattern := strings.CutSuffix(entry, "/...")
		if !slices.ContainsFunc(mine, func(rel string) bool { return rel == dir || pattern && strings.HasPrefix(rel, dir+"/") }) {
			t.Errorf("the map in docs/development.md names %s, which is no package of this module: remove it", entry)
		}
	}
	for _, rel := range mine {
		f, ok := m.floor(rel)
		if !ok {
			t.Errorf("%s is not on the map in docs/development.md: put it on the floor of what it is, at or above the floors of what it imports", rel)
			continue
		}
		path := module + "/" + rel
		if rel == "." {
			path = module
		}
		for _, imp := range g[path].Imports {
			irel, ok := local(imp)
			if !ok {
				continue
			}
			if fi, ok := m.floor(irel); ok && fi > f {
				t.Errorf("%s (floor %d) imports %s (floor %d): a package never imports one on a higher floor (docs/development.md, Layers)", rel, f, irel, fi)
			}
		}
	}
}
